// Memory headroom left by this process's cgroup, for cgroup v2 (memory.max −
// memory.current) and v1 (memory.limit_in_bytes − memory.usage_in_bytes). The
// cgroup comes from /proc/self/cgroup, its directory from /proc/self/mountinfo;
// every level up to the mount point counts, because a parent's limit (a Slurm
// job above its step, say) binds the child too. Reclaimable page cache
// (inactive_file in memory.stat) is not counted as used: reading a dataset
// fills the cache, and the kernel drops it before it would kill the job.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "preflight/host_memory.h"

namespace nss::preflight {

/// This process's cgroup paths from /proc/self/cgroup text (empty when absent).
struct CgroupMembership {
  std::string v2_path;         // from the "0::/path" line
  std::string v1_memory_path;  // from the line whose controllers include "memory"
};
CgroupMembership parse_proc_cgroup(const std::string& text);

/// A cgroup file system mount: the hierarchy path it exposes and where.
struct CgroupMount {
  std::string root;         // path inside the hierarchy (mountinfo field 4)
  std::string mount_point;  // where it is mounted (mountinfo field 5)
};
struct CgroupMounts {
  std::optional<CgroupMount> v2;
  std::optional<CgroupMount> v1_memory;
};
/// The cgroup2 mount and the v1 mount carrying the memory controller.
CgroupMounts parse_mountinfo(const std::string& text);

/// Directory of `cgroup_path` under `mount`; nullopt when the path lies
/// outside what the mount exposes.
std::optional<std::string> cgroup_directory(const CgroupMount& mount,
                                            const std::string& cgroup_path);

/// Headroom of the tightest level from `directory` up to `top` (both under
/// root), reading v2 or v1 files; nullopt when no level has a limit.
std::optional<MemoryLimit> cgroup_headroom(const SystemRoot& root, const std::string& directory,
                                           const std::string& top, int version);

/// The cgroup limits of this process (v2 and v1 memory, whichever exist);
/// problems reading them go to `notes`.
std::vector<MemoryLimit> read_cgroup_limits(const SystemRoot& root,
                                            std::vector<std::string>& notes);

}  // namespace nss::preflight
