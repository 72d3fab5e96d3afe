// Failures of the place a tool was told to write to (nss_consolidate
// --output): a parent that is not a directory, permission denied, a read-only
// or full file system, the file-size limit. Each is a usage error (exit 2)
// whatever the output format and whenever it happens, mid-write included: the
// remedy is another location or room at this one, never a change to the input.
#pragma once

#include <string>

#include "core/error.h"

namespace nss {

/// UsageError (exit 2) carrying `message` (what failed, on which path, and
/// why) and the hint that says what to change about the location.
UsageError output_location_error(const std::string& component, const std::string& message);

/// The same for a failed system call: "cannot <action> <path>: <errno text>".
UsageError output_location_error(const std::string& component, const std::string& action,
                                 const std::string& path, int error_number);

/// write_file_atomic (core/fs.h) of a file at an output location; a failure
/// is an output_location_error.
void write_output_file(const std::string& path, const std::string& content,
                       const std::string& component);

}  // namespace nss
