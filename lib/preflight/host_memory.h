// How much host memory this process can really use: the smallest of the
// kernel's MemAvailable, the headroom its cgroup leaves (v1 or v2, every level
// of a nested hierarchy) and Slurm's memory limit. Every reader takes its root
// directory and environment as parameters so tests run on fixture files.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace nss::preflight {

/// Where /proc and /sys are: an empty prefix on a real system, a fixture
/// directory in tests (files are read at prefix + absolute path).
struct SystemRoot {
  std::string prefix;
  std::string path(const std::string& absolute) const { return prefix + absolute; }
};

/// Reads one environment variable; nullopt when unset.
using EnvLookup = std::function<std::optional<std::string>(const std::string& name)>;

/// The process environment (getenv).
EnvLookup process_environment();

/// One source of a limit and the bytes it leaves usable.
struct MemoryLimit {
  std::string source;  // "MemAvailable", "cgroup v2 /sys/fs/cgroup/job_7", "SLURM_MEM_PER_NODE"
  std::uint64_t bytes = 0;
  std::string detail;  // how the figure was computed, for the report
};

struct HostMemory {
  std::optional<std::uint64_t> usable_bytes;  // the smallest limit; nullopt when none was readable
  std::string bound_by;                       // source of that smallest limit
  std::vector<MemoryLimit> limits;            // every limit found
  std::vector<std::string> notes;             // sources that could not be read, and why
};

/// MemAvailable from /proc/meminfo text, in bytes.
std::optional<std::uint64_t> parse_meminfo_available(const std::string& meminfo);

/// Slurm's per-node memory limit: SLURM_MEM_PER_NODE, else SLURM_MEM_PER_CPU x
/// CPUs (SLURM_CPUS_ON_NODE, else `usable_cpus`). Values are MiB, as Slurm
/// writes them (a K/M/G/T suffix is accepted). Unparsable values go to `notes`.
std::optional<MemoryLimit> slurm_memory_limit(const EnvLookup& env, int usable_cpus,
                                              std::vector<std::string>& notes);

/// Every limit that applies to this process and the smallest of them.
HostMemory read_host_memory(const SystemRoot& root, const EnvLookup& env, int usable_cpus);

/// Reads a small file; nullopt when it cannot be opened.
std::optional<std::string> read_small_file(const std::string& path);

}  // namespace nss::preflight
