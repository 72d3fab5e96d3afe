// Check "layout.parallel": the hybrid-sharding layout advice of the
// preflight, from the scaling model (parallel_layout_advice.h) and how the
// shard groups fall on the nodes.
#pragma once

#include "preflight/check.h"
#include "preflight/context.h"
#include "preflight/report.h"

namespace nss::preflight {

/// "layout.parallel" (never fails): on several nodes, the predicted step of
/// parallel.shard_group_size against full sharding and HSDP groups of the
/// ranks per node x {1, 2, 4, 8} (parallel_layout_advice.h), with the
/// synthetic step's compute time when report.memory has it. Warns when the
/// chosen group is predicted far from the best, or when shard groups leave
/// their nodes for nothing (groups that straddle nodes, or span whole nodes
/// where a group within one node is predicted no slower). Fills
/// report.parallel. Runs after the plan's stages.
Check check_parallel_layout(const PreflightContext& context, PreflightReport& report);

}  // namespace nss::preflight
