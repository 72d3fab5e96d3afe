#include "preflight/parallel_layout_check.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <numeric>
#include <optional>
#include <set>

#include "config/derived.h"
#include "config/load.h"
#include "core/error.h"
#include "core/units.h"
#include "model/unit_layouts.h"
#include "preflight/memory_checks.h"
#include "preflight/parallel_layout_advice.h"

namespace nss::preflight {
namespace {

constexpr const char* kParallel = "layout.parallel";
// Micro-steps in each of the synthetic step's measured steps: at most two
// (lib/train/training_preflight.cpp, kMeasuredMicroSteps; a private step
// always runs two).
constexpr std::int64_t kSyntheticMicroSteps = 2;

std::string fixed(double value, int digits) {
  char text[48];
  std::snprintf(text, sizeof text, "%.*f", digits, value);
  return text;
}

// How the shard groups (consecutive ranks) fall on the nodes.
struct ShardGroupPlacement {
  int most_nodes = 1;       // the most nodes one group spans
  bool whole_nodes = true;  // false: a group spans nodes and a node holds ranks of two groups
  std::string example;      // the first group spanning most_nodes, "ranks 6-11 on hosts a, b"
};

ShardGroupPlacement place_shard_groups(const std::vector<RankFacts>& ranks, int g) {
  ShardGroupPlacement placement;
  std::map<std::string, std::set<std::size_t>> groups_on_host;
  const std::size_t size = static_cast<std::size_t>(g);
  for (std::size_t first = 0; first < ranks.size(); first += size) {
    const std::size_t end = std::min(ranks.size(), first + size);
    std::vector<std::string> hosts;
    for (std::size_t r = first; r < end; ++r) {
      groups_on_host[ranks[r].host].insert(first / size);
      if (std::find(hosts.begin(), hosts.end(), ranks[r].host) == hosts.end())
        hosts.push_back(ranks[r].host);
    }
    if (static_cast<int>(hosts.size()) <= placement.most_nodes) continue;
    placement.most_nodes = static_cast<int>(hosts.size());
    placement.example =
        "ranks " + std::to_string(first) + "-" + std::to_string(end - 1) + " on hosts " + hosts[0] +
        ", " + hosts[1] +
        (hosts.size() > 2 ? " and " + std::to_string(hosts.size() - 2) + " more" : std::string());
  }
  for (const auto& entry : groups_on_host)
    if (entry.second.size() > 1 && placement.most_nodes > 1) placement.whole_nodes = false;
  return placement;
}

// memory.synthetic_step's compute per optimizer step of this job, when it ran
// at the configured micro-batch: its time per step (over
// preflight.synthetic_steps, the first one's warm-up included) less the
// model's optimizer term (the model adds its own), scaled from the
// micro-steps it ran to the job's accumulation steps. Its collectives are
// local copies.
std::optional<double> measured_compute_s(const PreflightContext& context,
                                         const PreflightReport& report,
                                         const StepTimeModel& model) {
  const auto& config = context.config;
  for (const auto& m : report.memory.measurements) {
    if (m.micro_batch_size != config.training.micro_batch_size || !m.tensor_peak_bytes ||
        m.seconds <= 0)
      continue;
    const std::int64_t accumulation = config::accumulation_steps(config, context.world_size);
    const std::int64_t measured = config.privacy.enabled
                                      ? kSyntheticMicroSteps
                                      : std::min(accumulation, kSyntheticMicroSteps);
    const int g = config::shard_group_ranks(config.parallel, context.world_size);
    const double optimizer = model.step_time(context.world_size, g, 0.0).optimizer_s;
    const double per_step = m.seconds / static_cast<double>(config.preflight.synthetic_steps);
    return std::max(0.0, per_step - optimizer) * static_cast<double>(accumulation) /
           static_cast<double>(measured);
  }
  return std::nullopt;
}

// Candidates must fit the memory budget by the analytic model: one with a
// smaller group or another T than the chosen layout holds more model state
// or other activations (a larger group at the same T holds less than the
// chosen one, which memory.budget judges).
std::function<bool(Layout)> fits_memory(const PreflightContext& context, Layout chosen) {
  const std::optional<std::uint64_t> budget = memory_budget(context);
  if (!budget) return nullptr;
  return [&context, chosen, budget](Layout layout) {
    if (layout.tensor == chosen.tensor && layout.shard_group >= chosen.shard_group) return true;
    config::Config other = context.config;
    other.parallel.shard_group_size = layout.shard_group;
    other.parallel.tensor_parallel_size = layout.tensor;
    const PreflightContext at = with_config(context, other);
    return predicted_total_bytes(at, other.training.micro_batch_size) <= *budget;
  };
}

// Whether the job runs at tensor_parallel_size t with these ranks: the
// configuration's checks, the layout's arithmetic and the model's split.
std::function<bool(int)> runs_at_tensor(const config::Config& config, int n) {
  return [&config, n](int t) {
    config::Config other = config;
    other.parallel.tensor_parallel_size = t;
    other.parallel.shard_group_size = 0;
    try {
      config::validate(other);
      config::validate_layout(other, n);
      if (t > 1) model::tensor_parallel_plan(other);
    } catch (const Error&) {
      return false;
    }
    return true;
  };
}

// The keys that choose layout (g, t) at n ranks when the job runs at T = `configured`.
std::string layout_setting(int n, Layout layout, int configured) {
  const int g = layout.shard_group, t = layout.tensor;
  return "parallel.shard_group_size=" +
         (g * t == n ? std::string("0 (full sharding)") : std::to_string(g)) +
         (t == configured ? std::string()
                          : " and parallel.tensor_parallel_size=" + std::to_string(t));
}

// What the advice says of the layout before predicting it: shard groups of
// g ranks of one tensor rank, T = t; a replica's g·t consecutive ranks are
// the nodes its shard groups span.
struct NodeLayout {
  int n = 0, g = 0, t = 1, m = 0;
  int in_node = 0;  // the shard group of one node's ranks (in ranks of one tensor rank)
  bool spans = false, straddles = false;
  std::string where, links, straddle_finding, straddle_fix;
};

// "parallel.shard_group_size=8 (the ranks per node)": groups within one node.
std::string in_node_setting(const NodeLayout& l) {
  return "parallel.shard_group_size=" + std::to_string(l.in_node) +
         (l.t > 1 ? " (the ranks per node / tensor_parallel_size)" : " (the ranks per node)");
}

NodeLayout describe_node_layout(const PreflightContext& context, const ParallelSummary& summary,
                                const ShardGroupPlacement& placement) {
  NodeLayout l;
  l.n = context.world_size;
  l.g = summary.shard_group_size;
  l.t = summary.tensor_parallel_size;
  l.m = summary.ranks_per_node;
  l.in_node = std::max(1, std::gcd(l.n, l.m) / l.t);
  const int replica = l.g * l.t;
  l.spans = replica != l.n && placement.most_nodes > 1;
  l.straddles = l.spans && !placement.whole_nodes;
  l.links = "links " + fixed(summary.intra_node_bandwidth_gbs, 0) + " GB/s within a node, " +
            fixed(summary.inter_node_bandwidth_gbps, 0) + " Gb/s per rank between nodes";
  l.where = layout_name(l.n, l.g, l.t) + " on " + std::to_string(summary.nodes) +
            (summary.nodes == 1 ? " node of " : " nodes of ") + std::to_string(l.m) + " ranks" +
            (summary.replica_groups > 1
                 ? " (" + std::to_string(summary.replica_groups) + " replica groups)"
                 : std::string());
  l.straddle_finding = "shard groups straddle nodes (" + placement.example +
                       "): their all-gathers and reduce-scatters leave the node";
  l.straddle_fix = replica % l.m == 0 || l.m % replica == 0
                       ? "start consecutive ranks on the same node (block placement: srun "
                         "--distribution=block, mpirun --map-by slot)"
                       : "set " + in_node_setting(l) + " or a divisor or multiple of it";
  return l;
}

// A layout's name; with T = 1 said when the job runs at another T.
std::string name_of(const NodeLayout& l, int g, int t) {
  return layout_name(l.n, g, t) + (t == 1 && l.t > 1 ? ", T=1" : "");
}

void record_prediction(ParallelSummary& summary, const LayoutAdvice& advice) {
  summary.step_s = advice.mine.step_s;
  summary.efficiency = advice.mine.efficiency;
  summary.exposed_comm_s = advice.mine.exposed_comm_s;
  summary.best_shard_group_size = advice.best.shard_group;
  summary.best_tensor_parallel_size = advice.best.tensor;
  summary.best_step_s = advice.best.step_s;
  summary.best_efficiency = advice.best.efficiency;
  summary.slower = advice.slower;
  for (const auto& p : advice.candidates)
    summary.layouts.push_back(
        {p.shard_group, p.tensor, p.step_s, p.efficiency, p.exposed_comm_s, p.tensor_s,
         p.state_bytes_per_rank,
         std::find(advice.left_out.begin(), advice.left_out.end(),
                   Layout{p.shard_group, p.tensor}) == advice.left_out.end()});
}

// The chosen layout against the best candidate; `fixes` gains the better group.
std::string compare_with_best(const NodeLayout& l, const LayoutAdvice& advice,
                              std::vector<std::string>& fixes) {
  const LayoutPrediction& mine = advice.mine;
  const LayoutPrediction& best = advice.best;
  std::string finding = l.where + ": predicted step " + fixed(mine.step_s, 3) + " s, efficiency " +
                        fixed(mine.efficiency, 2) + " against one node";
  if (advice.far) {
    finding += ", " + fixed(100 * advice.slower, 0) + "% slower than " +
               name_of(l, best.shard_group, best.tensor) + " (" + fixed(best.step_s, 3) +
               " s, efficiency " + fixed(best.efficiency, 2) + ")";
    if (mine.exposed_comm_s > best.exposed_comm_s)
      finding += ": " + fixed(mine.exposed_comm_s, 3) +
                 " s of communication not hidden behind compute against " +
                 fixed(best.exposed_comm_s, 3) + " s";
    if (mine.shard_span.nodes > 1)
      finding += (mine.exposed_comm_s > best.exposed_comm_s ? "; " : ": ") +
                 std::string("its all-gathers and reduce-scatters span ") +
                 std::to_string(mine.shard_span.nodes) + " nodes (" + std::to_string(l.g - 1) +
                 " ring steps each)";
    if (mine.tensor_s > best.tensor_s)
      finding += "; " + fixed(mine.tensor_s, 3) +
                 " s of tensor-parallel collectives on the compute stream against " +
                 fixed(best.tensor_s, 3) + " s";
    fixes.push_back("set " + layout_setting(l.n, {best.shard_group, best.tensor}, l.t) +
                    ": predicted " + fixed(best.step_s, 3) + " s per step, model state " +
                    format_bytes(best.state_bytes_per_rank) + " per rank against " +
                    format_bytes(mine.state_bytes_per_rank));
  } else if ((best.shard_group != l.g || best.tensor != l.t) && advice.slower > 0) {
    finding += ", within " + fixed(100 * advice.slower, advice.slower < 0.1 ? 1 : 0) +
               "% of the best, " + name_of(l, best.shard_group, best.tensor) + " at " +
               fixed(best.step_s, 3) + " s";
  } else {
    finding += ", the best predicted layout";
  }
  return finding;
}

// Where the shard groups sit: straddling nodes, spanning them needlessly, or
// spanning them for speed; `fixes` gains the placement's fix.
std::string placement_finding(const NodeLayout& l, const ShardGroupPlacement& placement,
                              const LayoutAdvice& advice, const LayoutPrediction& within,
                              bool within_fits, bool needless_span,
                              std::vector<std::string>& fixes) {
  const LayoutPrediction& best = advice.best;
  if (l.straddles) {
    fixes.push_back(l.straddle_fix);
    return "; " + l.straddle_finding;
  }
  if (needless_span) {
    if (!advice.far)
      fixes.push_back("set " + in_node_setting(l) +
                      (best.shard_group != l.in_node && best.step_s < within.step_s
                           ? ", or " + layout_setting(l.n, {best.shard_group, best.tensor}, l.t) +
                                 ", the best predicted layout at " + fixed(best.step_s, 3) + " s"
                           : std::string()));
    return "; each shard group spans " + std::to_string(placement.most_nodes) +
           " nodes, so its all-gathers leave the node, and " + layout_name(l.n, l.in_node, l.t) +
           " within a node is predicted no slower (" + fixed(within.step_s, 3) + " s)";
  }
  if (!l.spans) return "";
  return "; each shard group spans " + std::to_string(placement.most_nodes) + " nodes (" +
         (within_fits ? "predicted faster than " + layout_name(l.n, l.in_node, l.t) + "'s " +
                            fixed(within.step_s, 3) + " s"
                      : layout_name(l.n, l.in_node, l.t) + " would not fit the memory budget") +
         ")";
}

// The advice: the chosen layout's predicted step against the best
// candidate's (every shard group and T that runs) and, when its groups span
// nodes, against a group within one node.
Check advise_layouts(const PreflightContext& context, PreflightReport& report,
                     ParallelSummary& summary, const ShardGroupPlacement& placement) {
  const auto& config = context.config;
  const NodeLayout l = describe_node_layout(context, summary, placement);
  const StepTimeModel model(config, context.device, configured_workload(config, l.n),
                            configured_links(config.preflight, l.m));
  const std::optional<double> measured = measured_compute_s(context, report, model);
  double compute_s = 0;
  try {
    compute_s = measured ? *measured : model.calibrate_on_torchtitan();
  } catch (const UsageError& e) {
    const std::string finding =
        l.where + ": no step prediction (" + e.message() + "; " + l.links + ")";
    if (l.straddles)
      return Check::warn(kParallel, ExitCode::kUsage, finding + "; " + l.straddle_finding,
                         l.straddle_fix);
    return Check::pass(kParallel, ExitCode::kUsage, finding);
  }
  summary.compute_s = compute_s;
  summary.compute_source = measured ? "synthetic_step" : "torchtitan_rate";

  const auto fits = fits_memory(context, {l.g, l.t});
  const std::vector<Layout> candidates = candidate_layouts(
      model, l.n, advice_groups(l.m), advice_tensors(l.m), runs_at_tensor(config, l.n));
  const LayoutAdvice advice = advise_layout(model, l.n, l.g, compute_s, candidates, fits);
  const LayoutPrediction within = model.predict(l.n, l.in_node, compute_s);
  const bool within_fits = !fits || fits({l.in_node, l.t});
  const bool needless_span =
      l.spans && !l.straddles && within_fits && within.step_s <= advice.mine.step_s;
  record_prediction(summary, advice);

  std::vector<std::string> fixes;  // the comparison's fix first, then the placement's
  std::string finding = compare_with_best(l, advice, fixes);
  finding += placement_finding(l, placement, advice, within, within_fits, needless_span, fixes);
  finding += "; compute " + fixed(compute_s, 4) + " s per step (" +
             (measured ? std::string("the synthetic step")
                       : std::string("torchtitan's 5,762 tokens/s/GPU: no synthetic step "
                                     "measured at this micro-batch")) +
             "), " + l.links;
  Check check = Check::pass(kParallel, ExitCode::kUsage, finding);
  if (!fixes.empty()) {
    std::string remediation;
    for (const auto& fix : fixes) remediation += (remediation.empty() ? "" : "; ") + fix;
    // A placement fix stands on its own; a predicted one on the links.
    if (advice.far || needless_span)
      remediation +=
          "; the prediction rests on the link bandwidths: measure them with nccl-tests and set "
          "preflight.intra_node_bandwidth_gbs and preflight.inter_node_bandwidth_gbps";
    check = Check::warn(kParallel, ExitCode::kUsage, finding, remediation);
  }
  return check.with_numbers(advice.mine.step_s, measured, (1 + kFarFromBest) * advice.best.step_s,
                            "s");
}

// Tensor parallelism's groups run collectives in every layer: each must
// stay on one host.
std::optional<Check> tensor_group_across_hosts(const PreflightContext& context, int t) {
  const std::vector<RankFacts>& ranks = context.ranks;
  const std::string size = "parallel.tensor_parallel_size " + std::to_string(t);
  for (std::size_t first = 0; first + 1 < ranks.size(); first += static_cast<std::size_t>(t)) {
    const std::size_t end = std::min(ranks.size(), first + static_cast<std::size_t>(t));
    for (std::size_t r = first + 1; r < end; ++r)
      if (ranks[r].host != ranks[first].host)
        return Check::fail(
            kParallel, ExitCode::kUsage,
            size + ": tensor group " + std::to_string(first / static_cast<std::size_t>(t)) +
                " (ranks " + std::to_string(first) + "-" + std::to_string(end - 1) +
                ") spans hosts " + ranks[first].host + " and " + ranks[r].host,
            "use a tensor_parallel_size that divides the ranks per node (" +
                std::to_string(ranks[first].local_size) +
                " here), with consecutive ranks on each node (mpirun --map-by slot, srun's "
                "block distribution)");
  }
  return std::nullopt;
}

}  // namespace

Check check_parallel_layout(const PreflightContext& context, PreflightReport& report) {
  const auto& config = context.config;
  const int n = context.world_size;
  const int t = static_cast<int>(config.parallel.tensor_parallel_size);
  if (t > 1)
    if (std::optional<Check> spanning = tensor_group_across_hosts(context, t)) return *spanning;
  const int g = config::shard_group_ranks(config.parallel, n);
  if (g < 1 || t < 1 || n % (g * t) != 0)
    return Check::skipped(kParallel, ExitCode::kUsage,
                          "parallel.shard_group_size " + std::to_string(g) + " x " +
                              "tensor_parallel_size " + std::to_string(t) +
                              " does not divide the " + std::to_string(n) +
                              " ranks (see layout.batch)");
  const std::vector<NodeRanks> nodes = group_by_node(context.ranks);
  // A replica's g·t consecutive ranks hold its shard groups.
  const ShardGroupPlacement placement = place_shard_groups(context.ranks, g * t);
  ParallelSummary summary;
  summary.shard_group_size = g;
  summary.tensor_parallel_size = t;
  summary.replica_groups = n / (g * t);
  summary.nodes = std::max<int>(1, static_cast<int>(nodes.size()));
  for (const auto& node : nodes)
    summary.ranks_per_node = std::max(summary.ranks_per_node, static_cast<int>(node.ranks.size()));
  summary.shard_group_nodes = placement.most_nodes;
  summary.whole_nodes = placement.whole_nodes;
  summary.intra_node_bandwidth_gbs = config.preflight.intra_node_bandwidth_gbs;
  summary.inter_node_bandwidth_gbps = config.preflight.inter_node_bandwidth_gbps;
  summary.threshold = kFarFromBest;
  // On one node at T = 1 every collective stays within it and nothing is
  // on the compute stream: no layout is predicted faster.
  if (summary.nodes == 1 && t == 1) {
    report.parallel = summary;
    return Check::pass(kParallel, ExitCode::kUsage,
                       layout_name(n, g) + " on one node (" +
                           (nodes.empty() ? std::string("") : "host " + nodes[0].host + ", ") +
                           std::to_string(n) +
                           " ranks): every collective stays within it; the layout advice is for "
                           "jobs on several nodes or with tensor parallelism");
  }
  Check check = advise_layouts(context, report, summary, placement);
  report.parallel = summary;
  return check;
}

}  // namespace nss::preflight
