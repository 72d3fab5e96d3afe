// The one owner of where a tool writes its output (nss_prepare_data,
// nss_generate, nss_consolidate and the Hugging Face writers they use):
// nothing but a new path or, where the tool allows it, a regular file is
// ever written. A directory, a device node, a FIFO or a socket at the output
// path is refused before any work, so a tool run as root can never replace
// /dev/null. Output is built under a temporary name beside the final one and
// published by a rename that, for tools whose outputs are never replaced,
// refuses to replace whatever appeared there meanwhile (another job).
//
// Every failure of the place is a usage error (exit 2): a path that is taken,
// a parent that is missing or not a directory, permission denied, a read-only
// or full file system, the file-size limit — mid-write included. The remedy
// is another location or room at this one, never a change to the input.
#pragma once

#include <cstdint>
#include <string>

#include "core/error.h"

namespace nss {

/// What a tool may find at its output path besides nothing.
enum class ExistingOutput {
  kRefuse,       // the results of a run (exports, samples): never replaced
  kReplaceFile,  // a file derived from its inputs (a token file): a regular file is replaced
};

/// Where a tool writes one output file or directory.
struct OutputTarget {
  std::string path;
  std::string component = "output";  // "[component]" of the messages
  std::string option = "--output";   // the flag that names it, for messages
  ExistingOutput existing = ExistingOutput::kRefuse;
  bool private_data = false;  // created readable by its owner only (0600)
};

/// UsageError (exit 2) carrying `message` (what failed, on which path, and
/// why) and the hint that says what to change about the location.
UsageError output_location_error(const std::string& component, const std::string& message);

/// The same for a failed system call: "cannot <action> <path>: <errno text>".
UsageError output_location_error(const std::string& component, const std::string& action,
                                 const std::string& path, int error_number);

/// Refuses (exit 2) what is at `target.path`: anything but nothing, or a
/// regular file where the target allows replacing one. The parent is not
/// looked at: creating the temporary output beside the path reports a parent
/// that is missing or not writable with the system's reason.
void check_output_path(const OutputTarget& target);

/// Moves the finished `temporary` (a file or a directory) to `target.path`:
/// checked again, renamed — for kRefuse without replacing anything that
/// appeared meanwhile (renameat2 RENAME_NOREPLACE; link and unlink for a file
/// where the file system lacks it) — and the parent directory fsynced.
void publish_output(const std::string& temporary, const OutputTarget& target);

/// `content` as the file `target.path`: checked, written beside it under a
/// temporary name and fsynced, then published.
void write_output_file(const OutputTarget& target, const std::string& content);

/// A new file `path` inside an output directory this tool is building
/// (component names the writer): write_output_file with kRefuse.
void write_output_file(const std::string& path, const std::string& content,
                       const std::string& component);

/// Allocates `bytes` for the output file `fd` (at `path`) so that a location
/// without room fails now, with the system's reason (exit 2), rather than in
/// a later write; file systems that cannot allocate ahead skip the check.
void reserve_output_room(int fd, std::uint64_t bytes, const std::string& component,
                         const std::string& path);

}  // namespace nss
