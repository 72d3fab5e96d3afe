#include "preflight/host_memory.h"

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "core/units.h"
#include "preflight/cgroup_memory.h"

namespace nss::preflight {
namespace {

constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;

// Slurm memory figures: an integer in MiB, optionally suffixed K, M, G or T.
std::optional<std::uint64_t> parse_slurm_megabytes(const std::string& text) {
  std::size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
  if (digits == 0) return std::nullopt;
  const std::uint64_t value = std::strtoull(text.substr(0, digits).c_str(), nullptr, 10);
  const std::string suffix = text.substr(digits);
  if (suffix.empty() || suffix == "M" || suffix == "m") return value * kMiB;
  if (suffix == "K" || suffix == "k") return value * 1024;
  if (suffix == "G" || suffix == "g") return value * kMiB * 1024;
  if (suffix == "T" || suffix == "t") return value * kMiB * 1024 * 1024;
  return std::nullopt;
}

}  // namespace

std::optional<std::string> read_small_file(const std::string& path) {
  std::ifstream file(path);
  if (!file) return std::nullopt;
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

EnvLookup process_environment() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* value = std::getenv(name.c_str());
    if (!value) return std::nullopt;
    return std::string(value);
  };
}

std::optional<std::uint64_t> parse_meminfo_available(const std::string& meminfo) {
  std::istringstream lines(meminfo);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.compare(0, 13, "MemAvailable:") != 0) continue;
    std::istringstream fields(line.substr(13));
    std::uint64_t kib = 0;
    std::string unit;
    if (fields >> kib) return kib * 1024;
  }
  return std::nullopt;
}

std::optional<MemoryLimit> slurm_memory_limit(const EnvLookup& env, int usable_cpus,
                                              std::vector<std::string>& notes) {
  // Slurm sets 0 for "all of the node's memory", which is no limit of its own.
  if (const auto per_node = env("SLURM_MEM_PER_NODE")) {
    const auto bytes = parse_slurm_megabytes(*per_node);
    if (!bytes) {
      notes.push_back("SLURM_MEM_PER_NODE='" + *per_node + "' is not a memory size in MiB");
    } else if (*bytes > 0) {
      return MemoryLimit{"SLURM_MEM_PER_NODE", *bytes, *per_node + " MiB per node"};
    }
  }
  if (const auto per_cpu = env("SLURM_MEM_PER_CPU")) {
    const auto bytes = parse_slurm_megabytes(*per_cpu);
    if (!bytes) {
      notes.push_back("SLURM_MEM_PER_CPU='" + *per_cpu + "' is not a memory size in MiB");
      return std::nullopt;
    }
    int cpus = usable_cpus;
    std::string cpus_source = "usable CPUs";
    if (const auto on_node = env("SLURM_CPUS_ON_NODE")) {
      const int parsed = std::atoi(on_node->c_str());
      if (parsed > 0) {
        cpus = parsed;
        cpus_source = "SLURM_CPUS_ON_NODE";
      }
    }
    if (*bytes > 0 && cpus > 0)
      return MemoryLimit{
          "SLURM_MEM_PER_CPU", *bytes * static_cast<std::uint64_t>(cpus),
          *per_cpu + " MiB x " + std::to_string(cpus) + " CPUs (" + cpus_source + ")"};
  }
  return std::nullopt;
}

HostMemory read_host_memory(const SystemRoot& root, const EnvLookup& env, int usable_cpus) {
  HostMemory memory;
  const auto meminfo = read_small_file(root.path("/proc/meminfo"));
  const auto available = meminfo ? parse_meminfo_available(*meminfo) : std::nullopt;
  if (available) {
    memory.limits.push_back({"MemAvailable", *available, "/proc/meminfo MemAvailable"});
  } else {
    memory.notes.push_back("cannot read MemAvailable from /proc/meminfo");
  }
  for (auto& limit : read_cgroup_limits(root, memory.notes)) memory.limits.push_back(limit);
  if (auto slurm = slurm_memory_limit(env, usable_cpus, memory.notes))
    memory.limits.push_back(std::move(*slurm));

  for (const auto& limit : memory.limits) {
    if (!memory.usable_bytes || limit.bytes < *memory.usable_bytes) {
      memory.usable_bytes = limit.bytes;
      memory.bound_by = limit.source;
    }
  }
  return memory;
}

}  // namespace nss::preflight
