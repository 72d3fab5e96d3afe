// Exclusive ownership of a run directory by one live job, so two jobs never
// interleave checkpoints and metrics in one place.
#pragma once

#include <string>

namespace nss::log {

class RunDirectoryLock {
 public:
  /// Takes `<dir>/.nss_hpc.lock` (flock, released by the kernel when the
  /// process dies, so a crashed or requeued job never leaves a stale lock).
  /// Throws UsageError naming the owning host, pid and Slurm job when a live
  /// job holds it.
  explicit RunDirectoryLock(const std::string& dir);
  ~RunDirectoryLock();

  RunDirectoryLock(const RunDirectoryLock&) = delete;
  RunDirectoryLock& operator=(const RunDirectoryLock&) = delete;

  /// Path of the lock file.
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
};

}  // namespace nss::log
