// Check group 3, host memory (exit 3 on failure): the batches the dataloader
// queues hold and, on GPU runs, the pinned host copy of the checkpointed
// state, for every rank of a node, against that node's usable host memory —
// on every node, so the tightest node decides.
#pragma once

#include <cstdint>

#include "preflight/check.h"
#include "preflight/context.h"
#include "preflight/report.h"

namespace nss::preflight {

/// Bytes one rank's dataloader queue holds: max(1, num_workers) x
/// prefetch_factor x micro_batch_size x data::sample_bytes x 2 (the batch as
/// read and as handed over) — data::loader_host_memory_bytes, saturating.
/// Also a component of the memory model.
std::uint64_t dataloader_bytes_per_rank(const config::Config& config);

/// Bytes of one GPU rank's pinned host copy of its checkpointed state (its
/// masters and moments, train::ShardedState); 0 on CPU, where the checkpoint
/// reads the state itself.
std::uint64_t checkpoint_host_copy_bytes(const PreflightContext& context);

/// "dataloader.host_memory": both of the above per rank; warns above
/// preflight.host_memory_warn_fraction and fails above host_memory_fail_fraction of the tightest
/// node's usable memory; fills report.dataloader (estimated and available bytes).
Check check_dataloader_host_memory(const PreflightContext& context, PreflightReport& report);

}  // namespace nss::preflight
