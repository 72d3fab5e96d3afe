// What rank 0's checks decide from: the agreed configuration, the world size,
// the device kind, every rank's facts and rank 0's own memory before the model.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "config/config.h"
#include "plan/run_plan.h"
#include "preflight/rank_facts.h"

namespace nss::preflight {

struct PreflightContext {
  const config::Config& config;
  int world_size = 1;
  DeviceKind device = DeviceKind::kCpu;
  std::vector<RankFacts> ranks;  // rank order, one per rank
  /// Rank 0's resident memory before any model exists (libraries, MPI, the
  /// runtime): the CPU fixed overhead of the memory checks.
  std::uint64_t baseline_resident_bytes = 0;
  /// Packed training rows: the input spans of the costliest row (documents,
  /// then padding; preflight::packed_row_spans). Empty: windows, or one
  /// document filling each row.
  std::vector<std::int64_t> packed_row_spans;

  /// The job's run plan (plan::make_run_plan of this configuration, device
  /// and world size): what the runtime will do.
  plan::RunPlan run_plan() const;
};

/// The same job under another configuration, for a check's what-if (QLoRA,
/// offload, another shard group size); `config` must outlive the result.
PreflightContext with_config(const PreflightContext& context, const config::Config& config);

/// The ranks of one node (same host name), in rank order.
struct NodeRanks {
  std::string host;
  std::vector<const RankFacts*> ranks;
};

/// Ranks grouped by node, nodes in order of their lowest rank.
std::vector<NodeRanks> group_by_node(const std::vector<RankFacts>& ranks);

/// "rank 3 (host n12)", for messages.
std::string rank_label(const RankFacts& facts);

}  // namespace nss::preflight
