#include "train/metrics_log.h"

#include <cerrno>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "core/error.h"
#include "core/fs.h"

namespace nss::train {
namespace {

// Size of the file up to its last complete line (a regular file only: a
// device such as /dev/full has no lines to keep).
off_t complete_lines_size(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0) return -1;
  off_t end = st.st_size;
  char tail[4096];
  while (end > 0) {
    const off_t begin = end > static_cast<off_t>(sizeof tail) ? end - sizeof tail : 0;
    const ssize_t n = ::pread(fd, tail, static_cast<size_t>(end - begin), begin);
    if (n <= 0) return -1;
    for (ssize_t i = n - 1; i >= 0; --i)
      if (tail[i] == '\n') return begin + i + 1;
    end = begin;
  }
  return 0;
}

}  // namespace

MetricsLog::MetricsLog(const std::string& path) : path_(path) {
  fd_ = ::open(path.c_str(), O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0)
    throw UsageError("train", "cannot open " + path + " for appending: " + errno_text(errno),
                     "make run.output_dir writable");
  struct stat st {};
  const off_t complete = complete_lines_size(fd_);
  if (complete >= 0 && ::fstat(fd_, &st) == 0 && complete < st.st_size) {
    spdlog::warn("[train] {} ended in a torn line (a killed job); cutting it off", path);
    if (::ftruncate(fd_, complete) != 0)
      spdlog::warn("[train] cannot cut {}: {}", path, errno_text(errno));
  }
}

MetricsLog::~MetricsLog() {
  if (fd_ >= 0) ::close(fd_);
}

void MetricsLog::append(const nlohmann::json& record) {
  const std::string line = record.dump() + "\n";
  struct stat before {};
  const bool regular = ::fstat(fd_, &before) == 0 && S_ISREG(before.st_mode);
  const ssize_t written = ::write(fd_, line.data(), line.size());
  if (written == static_cast<ssize_t>(line.size())) return;
  const int error = written < 0 ? errno : EFBIG;
  // A short write (a file-size limit, a disk filling up) is undone: the file
  // keeps whole lines only.
  if (written > 0 && regular && ::ftruncate(fd_, before.st_size) != 0)
    spdlog::warn("[train] cannot undo a partial line in {}: {}", path_, errno_text(errno));
  if (dropped_++ == 0)
    spdlog::warn(
        "[train] cannot write {}: {}; training and checkpoints go on, and each metrics line "
        "that cannot be written is dropped whole (this warning is not repeated; free space on "
        "run.output_dir's file system)",
        path_, errno_text(error));
}

}  // namespace nss::train
