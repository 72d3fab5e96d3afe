// One output file written durably and atomically at a target the output
// owner checked (core/output_location.h): bytes go to temporary_path_for(path)
// with pwrite at known offsets, then fsync, then publish_output puts it at the
// path (never over anything but what the target allows) and fsyncs the
// directory. Destroyed before commit() (an error), it removes the temporary
// file, so a failed run leaves nothing. Every failure is an
// output_location_error (exit 2).
#pragma once

#include <cstdint>
#include <string>

#include "core/output_location.h"
#include "core/temporary_files.h"

namespace nss {

class OutputFile {
 public:
  /// Checks the target (check_output_path) and creates the temporary file.
  explicit OutputFile(OutputTarget target);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  const std::string& path() const { return target_.path; }
  /// Where the bytes go until commit(), for writers that lay the file out first (HDF5).
  const std::string& temporary_path() const { return tmp_path_; }

  /// Allocates `bytes` on disk (fallocate; the file is at least that long
  /// afterwards), so that a location without room for them fails now, with
  /// the system's reason, before anything is written. File systems that
  /// cannot allocate ahead skip the check.
  void reserve(std::uint64_t bytes);

  /// Writes `bytes` bytes at byte `offset`.
  void write_at(std::uint64_t offset, const void* data, std::uint64_t bytes);

  /// fsync, close, publish at the target's path.
  void commit();

  std::uint64_t bytes_written() const { return bytes_written_; }

 private:
  OutputTarget target_;
  std::string tmp_path_;
  TemporaryClaim claim_{tmp_path_};
  int fd_ = -1;
  bool committed_ = false;
  std::uint64_t bytes_written_ = 0;
};

}  // namespace nss
