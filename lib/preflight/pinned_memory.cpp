#include "preflight/pinned_memory.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <sys/resource.h>

#include "core/units.h"

namespace nss::preflight {
namespace {

// fp32 master, exp_avg and exp_avg_sq per shard element.
constexpr std::uint64_t kOffloadedBytesPerElement = 12;

// Saturates instead of wrapping: absurd sizes must read as huge, not small.
std::uint64_t times(std::uint64_t a, std::uint64_t b) {
  if (a != 0 && b > std::numeric_limits<std::uint64_t>::max() / a)
    return std::numeric_limits<std::uint64_t>::max();
  return a * b;
}

std::uint64_t plus(std::uint64_t a, std::uint64_t b) {
  return b > std::numeric_limits<std::uint64_t>::max() - a
             ? std::numeric_limits<std::uint64_t>::max()
             : a + b;
}

std::optional<std::uint64_t> limit_bytes(rlim_t value) {
  if (value == RLIM_INFINITY) return std::nullopt;
  return static_cast<std::uint64_t>(value);
}

std::string limit_text(const std::optional<std::uint64_t>& limit) {
  return limit ? format_bytes(*limit) : "unlimited";
}

void escalate(CheckStatus& status, CheckStatus to) {
  const auto rank = [](CheckStatus s) {
    return s == CheckStatus::kFail ? 2 : s == CheckStatus::kWarn ? 1 : 0;
  };
  if (rank(to) > rank(status)) status = to;
}

void append(std::string& text, const std::string& more) {
  if (!text.empty()) text += "; ";
  text += more;
}

}  // namespace

MemlockLimit read_memlock_limit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_MEMLOCK, &limit) != 0) return {};
  return {limit_bytes(limit.rlim_cur), limit_bytes(limit.rlim_max)};
}

PinnedMemoryVerdict check_pinned_memory(const PinnedMemoryInput& input) {
  PinnedMemoryVerdict verdict;
  const int ranks = std::max(1, input.ranks_on_node);
  verdict.pinned_bytes_per_rank =
      plus(times(kOffloadedBytesPerElement, input.shard_elements), input.checkpoint_mirror_bytes);
  verdict.pinned_bytes_on_node =
      times(verdict.pinned_bytes_per_rank, static_cast<std::uint64_t>(ranks));

  std::string per_rank = "12 B x " + std::to_string(input.shard_elements) +
                         " shard elements (fp32 masters and AdamW moments)";
  if (input.checkpoint_mirror_bytes > 0)
    per_rank += " + " + format_bytes(input.checkpoint_mirror_bytes) + " pinned checkpoint mirror";
  per_rank += " = " + format_bytes(verdict.pinned_bytes_per_rank) + " per rank";
  const std::string pinned =
      "pinned host memory for the offloaded optimizer state: " + std::to_string(ranks) +
      " ranks on the node x (" + per_rank + ") = " + format_bytes(verdict.pinned_bytes_on_node);

  const auto& usable = input.node.usable_bytes;
  if (!usable) {
    verdict.status = CheckStatus::kWarn;
    std::string why = "usable host memory is unknown";
    for (const auto& note : input.node.notes) why += " (" + note + ")";
    verdict.finding = pinned + "; " + why;
    verdict.fix = "make /proc/meminfo and the job's cgroup files readable so the check can run";
  } else {
    const double fraction =
        *usable > 0 ? double(verdict.pinned_bytes_on_node) / double(*usable) : 1e300;
    verdict.finding = pinned + " = " + format_percent(fraction) + " of the node's usable " +
                      format_bytes(*usable) + " (bound by " + input.node.bound_by +
                      "; pinned pages cannot be swapped or reclaimed)";
    const std::string fix =
        "spread the state over more shard ranks (more ranks, or a larger "
        "parallel.shard_group_size), run fewer ranks per node, give the job more host memory "
        "(Slurm --mem), or set parallel.offload_optimizer: false if the GPU can hold the state";
    if (fraction > input.fail_fraction) {
      verdict.status = CheckStatus::kFail;
      verdict.finding +=
          ", above preflight.host_memory_fail_fraction " + format_percent(input.fail_fraction);
      verdict.fix = fix;
    } else if (fraction > input.warn_fraction) {
      verdict.status = CheckStatus::kWarn;
      verdict.finding +=
          ", above preflight.host_memory_warn_fraction " + format_percent(input.warn_fraction);
      verdict.fix = fix;
    }
  }

  const auto& soft = input.memlock.soft;
  if (!soft) {
    append(verdict.finding, "RLIMIT_MEMLOCK unlimited");
  } else if (*soft >= verdict.pinned_bytes_per_rank) {
    append(verdict.finding,
           "RLIMIT_MEMLOCK " + format_bytes(*soft) + " covers a rank's pinned memory");
  } else {
    escalate(verdict.status, CheckStatus::kWarn);
    append(verdict.finding,
           "RLIMIT_MEMLOCK is " + format_bytes(*soft) + " (hard " + limit_text(input.memlock.hard) +
               "), below the " + format_bytes(verdict.pinned_bytes_per_rank) +
               " a rank pins. The NVIDIA driver locks cudaHostAlloc memory itself, "
               "usually without charging this limit, so pinning may well succeed; it is "
               "charged, and fails, where those buffers are registered with an RDMA NIC "
               "(InfiniBand verbs, MPI over UCX, GPUDirect RDMA). This check cannot tell "
               "which applies here");
    const auto& hard = input.memlock.hard;
    if (!hard || *hard >= verdict.pinned_bytes_per_rank) {
      append(verdict.fix,
             "raise the soft locked-memory limit in the job script before the launch: "
             "ulimit -l unlimited (the hard limit allows it)");
    } else {
      append(verdict.fix,
             "raise the hard locked-memory limit: memlock in /etc/security/limits.conf, "
             "LimitMEMLOCK=infinity for slurmd, docker --ulimit memlock=-1; Slurm copies "
             "the submitting shell's limits to the job (PropagateResourceLimits), so raise "
             "it where you submit as well");
    }
  }
  return verdict;
}

}  // namespace nss::preflight
