#include "checkpoint/output_file.h"

#include <cerrno>
#include <cstdio>
#include <fcntl.h>
#include <filesystem>
#include <unistd.h>

#include "core/error.h"
#include "core/fs.h"

namespace nss::checkpoint {
namespace {

const char* kOutputHint = "check free space and permissions where --output points";

}  // namespace

OutputFile::OutputFile(std::string final_path, bool existing)
    : final_path_(std::move(final_path)), tmp_path_(temporary_path_for(final_path_)) {
  fd_ = ::open(tmp_path_.c_str(),
               existing ? O_WRONLY | O_CLOEXEC : O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd_ < 0)
    throw CheckpointError("consolidate", "cannot open " + tmp_path_ + ": " + errno_text(errno),
                          kOutputHint);
}

OutputFile::~OutputFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_) ::unlink(tmp_path_.c_str());
}

void OutputFile::write_at(std::uint64_t offset, const void* data, std::uint64_t bytes) {
  const char* p = static_cast<const char*>(data);
  while (bytes > 0) {
    const ssize_t n = ::pwrite(fd_, p, bytes, static_cast<off_t>(offset));
    if (n < 0) {
      if (errno == EINTR) continue;
      throw CheckpointError("consolidate", "cannot write " + tmp_path_ + ": " + errno_text(errno),
                            kOutputHint);
    }
    p += n;
    offset += static_cast<std::uint64_t>(n);
    bytes -= static_cast<std::uint64_t>(n);
    bytes_written_ += static_cast<std::uint64_t>(n);
  }
}

void OutputFile::commit() {
  if (::fsync(fd_) != 0)
    throw CheckpointError("consolidate", "cannot fsync " + tmp_path_ + ": " + errno_text(errno),
                          kOutputHint);
  ::close(fd_);
  fd_ = -1;
  if (std::rename(tmp_path_.c_str(), final_path_.c_str()) != 0)
    throw CheckpointError(
        "consolidate",
        "cannot rename " + tmp_path_ + " to " + final_path_ + ": " + errno_text(errno),
        kOutputHint);
  committed_ = true;
  const auto parent = std::filesystem::path(final_path_).parent_path();
  fsync_directory(parent.empty() ? std::string(".") : parent.string());
}

}  // namespace nss::checkpoint
