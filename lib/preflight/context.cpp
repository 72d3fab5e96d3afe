#include "preflight/context.h"

namespace nss::preflight {

std::vector<NodeRanks> group_by_node(const std::vector<RankFacts>& ranks) {
  std::vector<NodeRanks> nodes;
  for (const auto& facts : ranks) {
    NodeRanks* node = nullptr;
    for (auto& candidate : nodes)
      if (candidate.host == facts.host) node = &candidate;
    if (!node) {
      nodes.push_back({facts.host, {}});
      node = &nodes.back();
    }
    node->ranks.push_back(&facts);
  }
  return nodes;
}

std::string rank_label(const RankFacts& facts) {
  return "rank " + std::to_string(facts.rank) + " (host " + facts.host + ")";
}

plan::RunPlan PreflightContext::run_plan() const {
  return plan::make_run_plan(config, device, world_size);
}

PreflightContext with_config(const PreflightContext& context, const config::Config& config) {
  return {config,
          context.world_size,
          context.device,
          context.ranks,
          context.baseline_resident_bytes,
          context.packed_row_spans};
}

}  // namespace nss::preflight
