#include "core/output_file.h"

#include <cerrno>
#include <fcntl.h>
#include <unistd.h>

#include "core/fs.h"

namespace nss {

OutputFile::OutputFile(OutputTarget target)
    : target_(std::move(target)), tmp_path_(temporary_path_for(target_.path)) {
  check_output_path(target_);
  fd_ = ::open(tmp_path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
               target_.private_data ? 0600 : 0644);
  if (fd_ < 0) throw output_location_error(target_.component, "create", tmp_path_, errno);
}

OutputFile::~OutputFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_) ::unlink(tmp_path_.c_str());
}

void OutputFile::reserve(std::uint64_t bytes) {
  reserve_output_room(fd_, bytes, target_.component, tmp_path_);
}

void OutputFile::write_at(std::uint64_t offset, const void* data, std::uint64_t bytes) {
  const char* p = static_cast<const char*>(data);
  while (bytes > 0) {
    const ssize_t n = ::pwrite(fd_, p, bytes, static_cast<off_t>(offset));
    if (n < 0) {
      if (errno == EINTR) continue;
      throw output_location_error(target_.component, "write", tmp_path_, errno);
    }
    p += n;
    offset += static_cast<std::uint64_t>(n);
    bytes -= static_cast<std::uint64_t>(n);
    bytes_written_ += static_cast<std::uint64_t>(n);
  }
}

void OutputFile::commit() {
  if (::fsync(fd_) != 0) throw output_location_error(target_.component, "fsync", tmp_path_, errno);
  const int closed = ::close(fd_);
  fd_ = -1;
  if (closed != 0) throw output_location_error(target_.component, "close", tmp_path_, errno);
  publish_output(tmp_path_, target_);
  committed_ = true;
  claim_.release();
}

}  // namespace nss
