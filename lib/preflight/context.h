// What rank 0's checks decide from: the agreed configuration, the world size,
// the device kind and every rank's facts.
#pragma once

#include <string>
#include <vector>

#include "config/config.h"
#include "preflight/rank_facts.h"

namespace nss::preflight {

struct PreflightContext {
  const config::Config& config;
  int world_size = 1;
  DeviceKind device = DeviceKind::kCpu;
  std::vector<RankFacts> ranks;  // rank order, one per rank
};

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
