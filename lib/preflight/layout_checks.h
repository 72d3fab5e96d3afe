// Check group 1, configuration and layout (exit 2 on failure): batch
// arithmetic at this world size, ranks against the devices of each node, and
// the compute dtype on those devices (the parallel layout's advice:
// parallel_layout_check.h).
#pragma once

#include <string>

#include "preflight/check.h"
#include "preflight/context.h"

namespace nss::preflight {

/// "layout.batch": global_batch_size divides into micro-batches over the ranks.
Check check_batch_layout(const config::Config& config, int world_size);

/// "layout.devices": GPU runs: one GPU per rank on every node, none shared or
/// missing. CPU runs: ranks x threads within each node's usable CPUs (warning).
Check check_devices(const PreflightContext& context);

/// "layout.dtype": the compute dtype works on every rank's device (bf16 on a
/// GPU needs compute capability 8.0; bf16 on a CPU without native bf16
/// instructions is a warning: correct but much slower than fp32).
Check check_dtype(const PreflightContext& context);

}  // namespace nss::preflight
