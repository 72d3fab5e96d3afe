#include "log/run_directory_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <ctime>
#include <string>

#include <spdlog/spdlog.h>

#include "core/error.h"
#include "core/fs.h"

namespace nss::log {
namespace {

std::string hostname() {
  char name[256] = {};
  ::gethostname(name, sizeof name - 1);
  return name;
}

std::string owner_record() {
  const char* job = std::getenv("SLURM_JOB_ID");
  return "host=" + hostname() + " pid=" + std::to_string(::getpid()) +
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

RunDirectoryLock::RunDirectoryLock(const std::string& dir) : path_(dir + "/.nss_hpc.lock") {
  create_directories(dir, "run");
  fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0)
    throw UsageError("run", "cannot create lock file " + path_ + ": " + errno_text(errno),
                     "make run.output_dir writable");
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    if (err == EWOULDBLOCK) {
      const std::string owner = read_owner(fd_);
      ::close(fd_);
      fd_ = -1;
      throw UsageError("run",
                       "run directory " + dir + " is in use by a live job (" + owner + ")",
                       "wait for that job to end, or give this run its own directory with "
                       "--set run.output_dir=PATH");
    }
    // File systems without flock support (some NFS mounts): proceed unguarded
    // rather than refusing every run; the owner record still tells who wrote last.
    if (err != ENOLCK && err != EOPNOTSUPP && err != ENOSYS) {
      ::close(fd_);
      fd_ = -1;
      throw UsageError("run", "cannot lock " + path_ + ": " + errno_text(err));
    }
    spdlog::warn("[run] file locks are not supported on the file system of {} ({}); "
                 "nothing stops a second job from writing into this run directory",
                 dir, errno_text(err));
  }
  const std::string record = owner_record();
  if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, record.data(), record.size(), 0) < 0)
    throw UsageError("run", "cannot write lock file " + path_ + ": " + errno_text(errno));
}

RunDirectoryLock::~RunDirectoryLock() {
  if (fd_ >= 0) {
    ::flock(fd_, LOCK_UN);
    ::close(fd_);
  }
}

}  // namespace nss::log
