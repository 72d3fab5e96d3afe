// Files that belong together, written in full to temporary files first and
// published together at the end: a tool that fails before publish() leaves
// whatever set was there before whole (the temporary files are removed, on a
// signal too), instead of half a new set beside half an old one.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/output_file.h"
#include "core/output_location.h"

namespace nss {

class StagedOutputs {
 public:
  /// Writes `content` to a temporary file beside `target` (checked as the
  /// output rules say; exit 2 for a location that refuses it or has no room).
  void stage(const OutputTarget& target, const std::string& content);

  /// Publishes every staged file at its path, in the order staged.
  void publish();

 private:
  std::vector<std::unique_ptr<OutputFile>> files_;
};

}  // namespace nss
