// Exclusive ownership of a directory by one live job: the run directory, so
// two jobs never interleave metrics and logs, and the checkpoint directory,
// so two jobs never delete each other's saves or mix their steps.
#pragma once

#include <string>

#include "core/error.h"

namespace nss::log {

/// What a locked directory is, for messages: its name, the setting that
/// moves it, and the exit code when it cannot be created.
struct DirectoryRole {
  const char* what;
  const char* setting;
  const char* move;  // how to give a job another one
  ExitCode unusable;
};
inline constexpr DirectoryRole kRunDirectory{"run directory", "run.output_dir",
                                             "--set run.output_dir=PATH", ExitCode::kUsage};
inline constexpr DirectoryRole kCheckpointDirectory{
    "checkpoint directory", "checkpoint.dir", "--set checkpoint.dir=PATH", ExitCode::kCheckpoint};

class DirectoryLock {
 public:
  /// Creates `dir` and takes `<dir>/.nss_hpc.lock` (flock, released by the
  /// kernel when the process dies, so a crashed or requeued job never leaves
  /// a stale lock). Throws UsageError naming the owning host, pid and Slurm
  /// job when a live job holds it; an Error with role.unusable when the
  /// directory or the lock file cannot be created.
  DirectoryLock(const std::string& dir, const DirectoryRole& role);
  ~DirectoryLock();

  DirectoryLock(const DirectoryLock&) = delete;
  DirectoryLock& operator=(const DirectoryLock&) = delete;

  /// Path of the lock file.
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
};

}  // namespace nss::log
