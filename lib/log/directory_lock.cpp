#include "log/directory_lock.h"

#include <cerrno>
#include <cstdlib>
#include <ctime>
#include <fcntl.h>
#include <filesystem>
#include <string>
#include <sys/file.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include "core/error.h"
#include "core/fs.h"
#include "core/host_and_time.h"

namespace nss::log {
namespace {

std::string owner_record() {
  const char* job = std::getenv("SLURM_JOB_ID");
  return "host=" + host_name() + " pid=" + std::to_string(::getpid()) +
         " slurm_job=" + (job ? job : "none") + " started=" + std::to_string(std::time(nullptr)) +
         "\n";
}

std::string read_owner(int fd) {
  char buffer[512] = {};
  const ssize_t n = ::pread(fd, buffer, sizeof buffer - 1, 0);
  std::string text = n > 0 ? std::string(buffer, static_cast<std::size_t>(n)) : "unknown owner";
  while (!text.empty() && text.back() == '\n') text.pop_back();
  return text;
}

}  // namespace

DirectoryLock::DirectoryLock(const std::string& dir, const DirectoryRole& role)
    : path_(dir + "/.nss_hpc.lock") {
  const std::string move = std::string("give this run its own ") + role.what + " with " + role.move;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    throw Error(role.unusable, "run",
                std::string("cannot create the ") + role.what + " " + dir + ": " + ec.message(),
                "choose a writable location for " + std::string(role.setting));
  fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0)
    throw Error(role.unusable, "run", "cannot create lock file " + path_ + ": " + errno_text(errno),
                std::string("make ") + role.setting + " writable");
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    if (err == EWOULDBLOCK) {
      const std::string owner = read_owner(fd_);
      ::close(fd_);
      fd_ = -1;
      throw UsageError(
          "run", std::string(role.what) + " " + dir + " is in use by a live job (" + owner + ")",
          "wait for that job to end, or " + move);
    }
    // File systems without flock support (some NFS mounts): proceed unguarded
    // rather than refusing every run; the owner record still tells who wrote last.
    if (err != ENOLCK && err != EOPNOTSUPP && err != ENOSYS) {
      ::close(fd_);
      fd_ = -1;
      throw UsageError("run", "cannot lock " + path_ + ": " + errno_text(err));
    }
    spdlog::warn(
        "[run] file locks are not supported on the file system of {} ({}); "
        "nothing stops a second job from writing into this {}",
        dir, errno_text(err), role.what);
  }
  const std::string record = owner_record();
  if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, record.data(), record.size(), 0) < 0)
    throw Error(role.unusable, "run", "cannot write lock file " + path_ + ": " + errno_text(errno),
                std::string("make ") + role.setting + " writable");
}

DirectoryLock::~DirectoryLock() {
  if (fd_ >= 0) {
    ::flock(fd_, LOCK_UN);
    ::close(fd_);
  }
}

}  // namespace nss::log
