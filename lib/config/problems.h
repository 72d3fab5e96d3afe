// Collects configuration problems so a user sees all of them in one run
// instead of fixing one per job submission.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace nss::config {

class Problems {
 public:
  /// `path`: full key path; `where`: file position or "--set ..." (empty:
  /// where `path` was located, if it was); `hint`: what to change.
  void add(std::string path, std::string where, std::string message, std::string hint = {});

  /// Records where the value of `path` came from, for the problems that
  /// checks of the values add later without knowing it.
  void locate(const std::string& path, std::string where) { origins_[path] = std::move(where); }

  bool empty() const { return items_.empty(); }

  /// Throws one UsageError (exit 2) listing every problem; no-op when empty.
  void throw_if_any() const;

 private:
  struct Item {
    std::string path, where, message, hint;
  };
  std::vector<Item> items_;
  std::map<std::string, std::string> origins_;
};

}  // namespace nss::config
