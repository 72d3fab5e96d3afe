// A consolidation output written durably and atomically: bytes go to
// "<path>.tmp.<pid>" with pwrite at known offsets, then fsync, then a rename
// over the final name and an fsync of its directory. Destroyed before commit()
// (an error), it removes the temporary file, so a failed run leaves nothing.
#pragma once

#include <cstdint>
#include <string>

namespace nss::checkpoint {

class OutputFile {
 public:
  /// Opens the temporary file for `final_path`; it must already exist when
  /// `existing` (e.g. created by HDF5), else it is created empty.
  OutputFile(std::string final_path, bool existing);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  /// Writes `bytes` bytes at byte `offset`; throws CheckpointError on failure.
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
