#include "preflight/parallel_layout_advice.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

#include "config/derived.h"
#include "core/error.h"
#include "model/param_spec.h"
#include "model/unit_layouts.h"
#include "quant/nf4_storage.h"

namespace nss::preflight {
namespace {

// scripts/bench/scale_model.py's constants, owned here for C++ (the link
// bandwidths' defaults are PreflightConfig's).
// Latencies (s), NCCL's tuning model for the Simple protocol
// (src/graph/tuning.cc): a ring step (or tree level) within a node and
// between nodes, and once per collective (Network.alpha_*).
constexpr double kAlphaIntra = 3.4e-6;
constexpr double kAlphaInter = 14e-6;
constexpr double kAlphaBase = 8.4e-6;
// AdamW on the shard (Scenario.optimizer_s_per_param: the fused H100 kernel,
// about 20 ms per 1.24 B parameters).
constexpr double kOptimizerSecondsPerParameter = 2e-11;
// The step's small all-reduces over all ranks (target tokens, loss, gradient
// norm, stop agreement), 8 bytes each.
constexpr int kSmallAllReduces = 4;
constexpr double kSmallAllReduceBytes = 8;
// Gradients are reduced in fp32 (docs/architecture.md's b_reduce).
constexpr double kReduceBytes = 4;
// The default calibration (scale_model.py TORCHTITAN): torchtitan's
// Llama-3.1-8B FSDP figure on one node of 8 H100s.
constexpr double kTorchtitanTokensPerSecondPerGpu = 5762.0;
constexpr int kTorchtitanGpus = 8;
constexpr int kCalibrationIterations = 100;

double bus_bandwidth(const LinkModel& links, GroupSpan span) {
  if (span.nodes <= 1) return links.intra_node_bytes_per_s;
  const double nics = links.single_nic ? 1 : span.per_node;
  return std::min(links.intra_node_bytes_per_s, nics * links.inter_node_bytes_per_s);
}

// n - 1 ring steps, nodes - 1 of them between nodes.
double ring_latency(int n, GroupSpan span) {
  if (n <= 1) return 0.0;
  const int inter = span.nodes - 1;
  return (n - 1 - inter) * kAlphaIntra + inter * kAlphaInter;
}

// Up and down a binary tree: 2 (log2 m intra + log2 k inter) levels.
double tree_latency(GroupSpan span) {
  if (span.per_node * span.nodes <= 1) return 0.0;
  return 2.0 * (std::ceil(std::log2(span.per_node)) * kAlphaIntra +
                std::ceil(std::log2(span.nodes)) * kAlphaInter);
}

double dtype_bytes(const config::Config& config, DeviceKind device) {
  return static_cast<double>(
      dtype_size(config::element_type(config::resolved_dtype(config.training, device))));
}

// Forward FLOPs per token of a unit's weights: 2 per element of its matrices
// (the embedding lookup costs nothing).
double matrix_flops(const layout::FlatLayout& layout) {
  double elements = 0;
  for (const auto& p : layout.params())
    if (p.shape.size() == 2) elements += static_cast<double>(p.numel());
  return 2.0 * elements;
}

void require_divides(int n, int g) {
  if (g < 1 || n % g != 0)
    throw UsageError("preflight", "shard group size " + std::to_string(g) +
                                      " must divide the world size " + std::to_string(n));
}

// One step's ops on the compute stream: the compute, and the collectives it
// waits for (the gather) or issues after it (reduce-scatter, replica all-reduce).
struct Op {
  double compute = 0, gather = 0, reduce_scatter = 0, all_reduce = 0;
};

}  // namespace

LinkModel configured_links(const config::PreflightConfig& preflight, int ranks_per_node) {
  LinkModel links;
  links.ranks_per_node = std::max(1, ranks_per_node);
  links.intra_node_bytes_per_s = preflight.intra_node_bandwidth_gbs * 1e9;
  links.inter_node_bytes_per_s = preflight.inter_node_bandwidth_gbps * 1e9 / 8;
  return links;
}

GroupSpan group_span(int n, int stride, const LinkModel& links) {
  const int per_node_ranks = links.ranks_per_node;
  if (n <= 1) return {1, 1};
  if (stride >= per_node_ranks) return {n, 1};
  const int per_node = std::min(n, per_node_ranks / stride);
  return {std::max(1, (n + per_node - 1) / per_node), per_node};
}

double all_gather_seconds(const LinkModel& links, double bytes, int n, GroupSpan span) {
  if (n <= 1) return 0.0;
  return kAlphaBase + ring_latency(n, span) + bytes * (n - 1) / n / bus_bandwidth(links, span);
}

double reduce_scatter_seconds(const LinkModel& links, double bytes, int n, GroupSpan span) {
  return all_gather_seconds(links, bytes, n, span);
}

// Ring or tree, whichever is faster; the same bus bandwidth for both.
double all_reduce_seconds(const LinkModel& links, double bytes, int n, GroupSpan span) {
  if (n <= 1) return 0.0;
  const double transfer = bytes * 2.0 * (n - 1) / n / bus_bandwidth(links, span);
  return kAlphaBase + transfer + std::min(2.0 * ring_latency(n, span), tree_latency(span));
}

namespace {

// A block's attention (scores and their product with the values), forward
// FLOPs per token on the flops_weight scale.
double attention_flops_weight(const config::Config& config) {
  const auto& m = config.model;
  return 4.0 * static_cast<double>(config.data.seq_len) *
         static_cast<double>(m.num_attention_heads) * static_cast<double>(m.head_dim);
}

// The share of the forward that training.activation_checkpointing recomputes:
// selective everything but the blocks' attention.
double recompute_share(const config::Config& config) {
  switch (config.training.activation_checkpointing) {
    case config::Recompute::kFull:
      return 1.0;
    case config::Recompute::kNone:
      return 0.0;
    case config::Recompute::kSelective:
      break;
  }
  double total = 0;
  for (const UnitCost& unit : unit_costs(config, DeviceKind::kCpu, 1)) total += unit.flops_weight;
  const double attention =
      attention_flops_weight(config) * static_cast<double>(config.model.num_hidden_layers);
  return total > 0 ? 1.0 - attention / total : 1.0;
}

}  // namespace

std::vector<UnitCost> unit_costs(const config::Config& config, DeviceKind device, int shard_group) {
  const double compute_bytes = dtype_bytes(config, device);
  const bool double_quant = config.training.lora.double_quant;
  const auto& m = config.model;
  std::vector<layout::FlatLayout> layouts;
  for (int u = 0; u < model::num_units(m); ++u)
    layouts.push_back(model::unit_layout(m, config.training.lora,
                                         config.training.weight_decay_embeddings, u, shard_group));
  const auto gathered = [&](const layout::FlatLayout& l) {
    return static_cast<double>(l.padded(true) + l.padded(false)) * compute_bytes +
           static_cast<double>(quant::nf4_storage(l.quantized_padded(), double_quant).total());
  };
  const double attention = attention_flops_weight(config);
  std::vector<UnitCost> units;
  for (std::size_t u = 0; u < layouts.size(); ++u) {
    const layout::FlatLayout& l = layouts[u];
    UnitCost cost;
    cost.gathered_bytes = gathered(l);
    cost.reduced_bytes = static_cast<double>(l.padded(true)) * kReduceBytes;
    cost.replica_reduced_bytes = static_cast<double>(l.shard_size(true)) * kReduceBytes;
    cost.shard_parameters = static_cast<double>(l.shard_size(true));
    cost.backward = u > 0 || l.numel(true) > 0;
    const bool block = u > 0 && u + 1 < layouts.size();
    const bool head = u > 0 && u + 1 == layouts.size();
    if (block) cost.flops_weight = matrix_flops(l) + attention;
    if (head) {
      cost.flops_weight = matrix_flops(l);
      if (m.tie_word_embeddings) {
        // The head gathers the embedding again and reduces its gradient
        // there; its optimizer state stays with the embedding unit.
        const layout::FlatLayout& embedding = layouts.front();
        cost.gathered_bytes += gathered(embedding);
        cost.reduced_bytes += static_cast<double>(embedding.padded(true)) * kReduceBytes;
        cost.replica_reduced_bytes +=
            static_cast<double>(embedding.shard_size(true)) * kReduceBytes;
        cost.flops_weight += matrix_flops(embedding);
      }
    }
    units.push_back(cost);
  }
  return units;
}

StepWorkload configured_workload(const config::Config& config, int world_size) {
  StepWorkload w;
  w.micro_steps = config::accumulation_steps(config, world_size);
  w.tokens_per_rank = static_cast<double>(config.data.seq_len) *
                      static_cast<double>(config.training.micro_batch_size) *
                      static_cast<double>(w.micro_steps);
  w.recompute = recompute_share(config);
  w.regather = config::reshard_after_forward(config);
  return w;
}

StepTimeModel::StepTimeModel(const config::Config& config, DeviceKind device, StepWorkload workload,
                             LinkModel links)
    : config_(config), device_(device), workload_(workload), links_(links) {}

LayoutPrediction StepTimeModel::step_time(int n, int g, double compute_s) const {
  require_divides(n, g);
  return simulate(unit_costs(config_, device_, g), n, g, compute_s);
}

LayoutPrediction StepTimeModel::simulate(const std::vector<UnitCost>& units, int n, int g,
                                         double compute_s) const {
  const StepWorkload& w = workload_;
  const int r = n / g;  // replica groups
  const GroupSpan shard = group_span(g, 1, links_);
  const GroupSpan replica = group_span(r, g, links_);
  double total_weight = 0;
  for (const auto& u : units) total_weight += u.flops_weight;
  if (total_weight == 0) total_weight = 1.0;
  const double per_micro = compute_s / static_cast<double>(w.micro_steps);
  std::vector<Op> forward, backward;
  for (const auto& u : units) {
    const double share = per_micro * u.flops_weight / total_weight;
    const bool reduces = u.reduced_bytes > 0;
    const double gather = all_gather_seconds(links_, u.gathered_bytes, g, shard);
    forward.push_back({share / (3.0 + w.recompute), gather, 0.0, 0.0});
    backward.push_back(
        {share * (2.0 + w.recompute) / (3.0 + w.recompute), w.regather && u.backward ? gather : 0.0,
         reduces ? reduce_scatter_seconds(links_, u.reduced_bytes, g, shard) : 0.0,
         reduces && r > 1 ? all_reduce_seconds(links_, u.replica_reduced_bytes, r, replica) : 0.0});
  }
  std::vector<Op> ops;
  for (std::int64_t micro = 0; micro < w.micro_steps; ++micro) {
    ops.insert(ops.end(), forward.begin(), forward.end());
    ops.insert(ops.end(), backward.rbegin(), backward.rend());
  }
  // Streams: compute, one FIFO stream for the shard group's collectives, and
  // the replica all-reduces. Unit i+1's gather is issued when unit i's
  // compute starts (one neighbour prefetched); a unit's reduce-scatter when
  // its backward ends.
  double comm_free = ops.front().gather;
  std::vector<double> gather_done(ops.size(), 0.0);
  gather_done[0] = comm_free;
  double compute_free = 0.0, replica_free = 0.0;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const Op& op = ops[i];
    const double start = std::max(compute_free, gather_done[i]);
    if (i + 1 < ops.size() && ops[i + 1].gather != 0) {
      comm_free = std::max(comm_free, start) + ops[i + 1].gather;
      gather_done[i + 1] = comm_free;
    }
    compute_free = start + op.compute;
    if (op.reduce_scatter != 0) comm_free = std::max(comm_free, compute_free) + op.reduce_scatter;
    if (op.all_reduce != 0) {
      if (w.replica_stream == ReplicaStream::kShared) {
        comm_free += op.all_reduce;
      } else {
        replica_free = std::max(replica_free, comm_free) + op.all_reduce;
        if (w.replica_stream == ReplicaStream::kBlocking) compute_free = replica_free;
      }
    }
  }
  LayoutPrediction p;
  p.world_size = n;
  p.shard_group = g;
  p.shard_span = shard;
  p.replica_span = replica;
  const double overlapped_body = std::max({compute_free, comm_free, replica_free});
  double comm_total = 0;
  for (const Op& op : ops) {
    comm_total += op.gather + op.reduce_scatter + op.all_reduce;
    p.compute_s += op.compute;
    p.gather_s += op.gather;
    p.reduce_scatter_s += op.reduce_scatter;
    p.all_reduce_s += op.all_reduce;
  }
  const double small = kSmallAllReduces * all_reduce_seconds(links_, kSmallAllReduceBytes, n,
                                                             group_span(n, 1, links_));
  double shard_parameters = 0;
  for (const auto& u : units) shard_parameters += u.shard_parameters;
  p.optimizer_s = shard_parameters * kOptimizerSecondsPerParameter;
  p.overlapped_s = overlapped_body + small + p.optimizer_s;
  p.serial_s = p.compute_s + comm_total + small + p.optimizer_s;
  p.step_s = w.overlap * p.overlapped_s + (1.0 - w.overlap) * p.serial_s;
  p.comm_s = comm_total + small;
  p.exposed_comm_s = p.step_s - p.compute_s - p.optimizer_s;
  p.state_bytes_per_rank = 16 * shard_parameters;
  return p;
}

LayoutPrediction StepTimeModel::predict(int n, int g, double compute_s) const {
  LayoutPrediction p = step_time(n, g, compute_s);
  const int one_node = links_.ranks_per_node;
  const LayoutPrediction ref = step_time(one_node, one_node, compute_s);
  p.tokens_per_s_per_rank = workload_.tokens_per_rank / p.step_s;
  p.efficiency = ref.step_s / p.step_s;
  return p;
}

double StepTimeModel::calibrate(int ref_n, int ref_g, double ref_step_s) const {
  require_divides(ref_n, ref_g);
  const std::vector<UnitCost> units = unit_costs(config_, device_, ref_g);
  const double comm_only = simulate(units, ref_n, ref_g, 0.0).step_s;
  if (comm_only > ref_step_s) {
    char text[240];
    std::snprintf(text, sizeof text,
                  "the reference step (%.4g s) is shorter than the modelled communication alone "
                  "(%.4g s)",
                  ref_step_s, comm_only);
    throw UsageError("preflight", text,
                     "the link bandwidths are too low for this step: set "
                     "preflight.intra_node_bandwidth_gbs and inter_node_bandwidth_gbps to "
                     "nccl-tests' bus bandwidths");
  }
  double lo = 0.0, hi = ref_step_s;
  for (int i = 0; i < kCalibrationIterations; ++i) {
    const double mid = 0.5 * (lo + hi);
    if (simulate(units, ref_n, ref_g, mid).step_s < ref_step_s)
      lo = mid;
    else
      hi = mid;
  }
  return 0.5 * (lo + hi);
}

double StepTimeModel::calibrate_on_torchtitan() const {
  return calibrate(kTorchtitanGpus, kTorchtitanGpus,
                   workload_.tokens_per_rank / kTorchtitanTokensPerSecondPerGpu);
}

std::vector<int> advice_groups(int ranks_per_node) {
  const int m = std::max(1, ranks_per_node);
  return {m, 2 * m, 4 * m, 8 * m};
}

LayoutAdvice advise_layout(const StepTimeModel& model, int n, int g, double compute_s,
                           const std::vector<int>& groups, const std::function<bool(int)>& fits,
                           double threshold) {
  const int mine = g == 0 ? n : g;
  std::set<int> sizes{n, mine};
  for (const int candidate : groups)
    if (candidate < n && n % candidate == 0) sizes.insert(candidate);
  LayoutAdvice advice;
  bool any = false;
  for (const int size : sizes) {
    const LayoutPrediction p = model.predict(n, size, compute_s);
    advice.candidates.push_back(p);
    if (size == mine) advice.mine = p;
    if (size != mine && fits && !fits(size)) {
      advice.left_out.push_back(size);
      continue;
    }
    // Ties go to the larger group (less model state per rank).
    if (!any || p.step_s <= advice.best.step_s) advice.best = p;
    any = true;
  }
  advice.slower = advice.mine.step_s / advice.best.step_s - 1.0;
  advice.far = advice.slower > threshold;
  return advice;
}

std::string layout_name(int n, int g) {
  return g == n || g == 0 ? "full sharding (G=" + std::to_string(n) + ")"
                          : "HSDP G=" + std::to_string(g);
}

}  // namespace nss::preflight
