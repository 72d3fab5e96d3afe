// The host side of optimizer-state offload (parallel.offload_optimizer): the
// pinned host memory a rank holds (its fp32 masters and both AdamW moments,
// 12 bytes per shard element, plus a pinned checkpoint mirror if it keeps
// one) against the locked-memory limit and against the node's usable host
// memory, which every rank of the node shares.
//
// What the check can know: RLIMIT_MEMLOCK, and the node's limits
// (MemAvailable, the cgroup headroom, Slurm's limit: host_memory.h). What it
// cannot: whether pinning will be charged to RLIMIT_MEMLOCK. libtorch pins
// with cudaHostAlloc (cudaHostRegister with
// PYTORCH_CUDA_ALLOC_CONF=pinned_use_cuda_host_register), and the offload
// engine with cudaHostAlloc; the NVIDIA driver locks those pages itself, not
// through mlock(), so on the usual Linux setups the limit does not bind them.
// It binds when the same buffers are registered with an RDMA NIC (InfiniBand
// verbs, MPI over UCX or verbs, GPUDirect RDMA), which charges the process's
// locked memory. A limit below the pinned bytes is therefore a warning,
// never a failure. Whether the driver's pages are charged to the job's cgroup
// also depends on the driver; they cannot be swapped or reclaimed either
// way, so the check counts them against the tightest node limit.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "preflight/check.h"
#include "preflight/host_memory.h"

namespace nss::preflight {

/// RLIMIT_MEMLOCK in bytes; nullopt means RLIM_INFINITY (unlimited).
struct MemlockLimit {
  std::optional<std::uint64_t> soft;  // what binds the process now
  std::optional<std::uint64_t> hard;  // what the soft limit may be raised to
};

/// This process's RLIMIT_MEMLOCK (getrlimit); both unlimited if it fails.
MemlockLimit read_memlock_limit();

/// What one rank pins and what its node offers.
struct PinnedMemoryInput {
  std::uint64_t shard_elements = 0;           // this rank's trainable shard elements, all units
  std::uint64_t checkpoint_mirror_bytes = 0;  // a pinned checkpoint copy kept besides, if any
  int ranks_on_node = 1;                      // ranks sharing the node's memory
  MemlockLimit memlock;
  HostMemory node;             // the node's usable memory (read_host_memory; the tightest rank's)
  double warn_fraction = 0.5;  // preflight.host_memory_warn_fraction
  double fail_fraction = 0.8;  // preflight.host_memory_fail_fraction
};

/// The outcome a preflight check reports.
struct PinnedMemoryVerdict {
  CheckStatus status = CheckStatus::kPass;  // kPass, kWarn or kFail
  std::string finding;                      // the numbers and what they are compared with
  std::string fix;                          // what to change; empty on pass
  std::uint64_t pinned_bytes_per_rank = 0;  // 12 x shard elements + the mirror, saturating
  std::uint64_t pinned_bytes_on_node = 0;   // x ranks_on_node
};

/// Fails when the node's pinned bytes exceed fail_fraction of its usable
/// memory, warns above warn_fraction, when usable memory is unknown, or when
/// a rank's pinned bytes exceed a finite RLIMIT_MEMLOCK.
PinnedMemoryVerdict check_pinned_memory(const PinnedMemoryInput& input);

}  // namespace nss::preflight
