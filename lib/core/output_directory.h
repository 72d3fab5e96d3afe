// A directory a tool fills with files of known names (nss_generate
// --records): the output owner's rules (core/output_location.h) for a
// directory. It may be new (its parent must exist), or an existing directory
// that holds none of the files — or, where the target allows replacing
// files, regular files of those names; anything else at the path is refused
// (exit 2). A directory this tool created is removed again when the tool ends
// before keep() (also by a terminating signal, core/temporary_files.h), so a
// refused or failed run leaves nothing behind.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/output_location.h"
#include "core/temporary_files.h"

namespace nss {

class OutputDirectory {
 public:
  /// Claims `target.path` for the files `names`; `what` names the directory
  /// in messages ("records output directory").
  OutputDirectory(OutputTarget target, std::string what, std::vector<std::string> names);
  ~OutputDirectory();
  OutputDirectory(const OutputDirectory&) = delete;
  OutputDirectory& operator=(const OutputDirectory&) = delete;

  const std::string& path() const { return target_.path; }
  /// The target of file `name` (one of the names claimed) inside the directory.
  OutputTarget file(const std::string& name) const;
  /// The directory stays whatever happens next (its files are being written).
  void keep() {
    kept_ = true;
    claim_.reset();
  }

 private:
  OutputTarget target_;
  std::string what_;
  std::vector<std::string> names_;
  bool created_ = false;
  bool kept_ = false;
  std::optional<TemporaryClaim> claim_;  // only a directory this tool created
};

}  // namespace nss
