// checkpoint.resume: where a run's state comes from. `auto` (the newest
// committed step of checkpoint.dir that loads, or a fresh start when there is
// none), `never` (a fresh start; committed steps there are refused), or a
// path: a step directory, or a checkpoint directory resolved like auto. The
// two names are read as every choice is (config::choice_of's rule: any case,
// blanks around them ignored); anything else is a path (./auto names a
// directory called auto). value_codec.h reads and writes it.
#pragma once

#include <string>

namespace nss::config {

class ResumeSetting {
 public:
  enum class Mode { kAuto, kNever, kPath };

  ResumeSetting() = default;
  /// "auto", "never" or a path (never empty: an empty text is auto).
  ResumeSetting(const std::string& text);  // NOLINT: a setting is written as its text
  ResumeSetting(const char* text) : ResumeSetting(std::string(text)) {}  // NOLINT

  Mode mode() const { return mode_; }
  bool automatic() const { return mode_ == Mode::kAuto; }
  bool never() const { return mode_ == Mode::kNever; }
  /// The step or checkpoint directory of Mode::kPath; empty otherwise.
  const std::string& path() const { return path_; }
  /// "auto", "never" or the path, as written back.
  std::string text() const;

 private:
  Mode mode_ = Mode::kAuto;
  std::string path_;
};

}  // namespace nss::config
