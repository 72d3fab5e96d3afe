// A consolidation output written durably and atomically: bytes go to
// "<path>.tmp.<pid>" with pwrite at known offsets, then fsync, then a rename
// over the final name and an fsync of its directory. Destroyed before commit()
// (an error), it removes the temporary file, so a failed run leaves nothing.
// Every failure is an output_location_error (core/output_location.h, exit 2).
#pragma once

#include <cstdint>
#include <string>

namespace nss::checkpoint {

class OutputFile {
 public:
  /// Creates the temporary file for `final_path` (it must not exist yet).
  explicit OutputFile(std::string final_path);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  /// Where the bytes go until commit(), for writers that lay the file out first (HDF5).
  const std::string& temporary_path() const { return tmp_path_; }

  /// Allocates `bytes` on disk (fallocate), so that a location without room for
  /// them fails now, with the system's reason, before anything is written.
  /// File systems that cannot allocate ahead skip the check.
  void reserve(std::uint64_t bytes);

  /// Writes `bytes` bytes at byte `offset`.
  void write_at(std::uint64_t offset, const void* data, std::uint64_t bytes);

  /// fsync, rename into place, fsync the directory.
  void commit();

  std::uint64_t bytes_written() const { return bytes_written_; }

 private:
  std::string final_path_, tmp_path_;
  int fd_ = -1;
  bool committed_ = false;
  std::uint64_t bytes_written_ = 0;
};

}  // namespace nss::checkpoint
