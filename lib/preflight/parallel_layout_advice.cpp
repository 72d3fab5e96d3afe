#include "preflight/parallel_layout_advice.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <set>
#include <tuple>

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

void require_divides(int n, int g, int t) {
  if (g < 1 || t < 1 || n % (g * t) != 0)
    throw UsageError("preflight", "shard group size " + std::to_string(g) +
                                      " x tensor parallel size " + std::to_string(t) +
                                      " must divide the world size " + std::to_string(n));
}

// One step's ops on the compute stream: the compute (and the tensor group's
// collectives, which run on it), and the collectives it waits for (the
// gather) or issues after it (reduce-scatter, replica all-reduce).
struct Op {
  double compute = 0, gather = 0, reduce_scatter = 0, all_reduce = 0, tensor = 0;
};

// A unit's tensor-parallel collectives in one micro-step's forward and backward.
struct TensorSeconds {
  double forward = 0, backward = 0;
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

// The ops' time on three streams: compute, one FIFO stream for the shard
// group's collectives, and the replica all-reduces. Unit i+1's gather is
// issued when unit i's compute starts (one neighbour prefetched); a unit's
// reduce-scatter when its backward ends; the tensor group's collectives
// hold the compute stream.
double overlapped_seconds(const std::vector<Op>& ops, ReplicaStream stream) {
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
    compute_free = start + op.compute + op.tensor;
    if (op.reduce_scatter != 0) comm_free = std::max(comm_free, compute_free) + op.reduce_scatter;
    if (op.all_reduce != 0) {
      if (stream == ReplicaStream::kShared) {
        comm_free += op.all_reduce;
      } else {
        replica_free = std::max(replica_free, comm_free) + op.all_reduce;
        if (stream == ReplicaStream::kBlocking) compute_free = replica_free;
      }
    }
  }
  return std::max({compute_free, comm_free, replica_free});
}

// A block's attention (scores and their product with the values), forward
// FLOPs per token on the flops_weight scale, of a rank's heads at T = t.
double attention_flops_weight(const config::Config& config, int t = 1) {
  const auto& m = config.model;
  return 4.0 * static_cast<double>(config.data.seq_len) *
         static_cast<double>(m.num_attention_heads / t) * static_cast<double>(m.head_dim);
}

// The tensor group's collectives per unit and micro-step (scale_model.py
// tensor_times; docs/architecture.md's bytes_tensor): with sequence
// parallelism a region is an all-gather and a reduce-scatter of the
// micro-batch's hidden states, without it an all-reduce; every norm's
// gradient is summed over the group under sequence parallelism; the head
// all-reduces three fp32 values per token of each loss chunk.
std::vector<TensorSeconds> tensor_seconds(const config::Config& config, const StepWorkload& w,
                                          const LinkModel& links, double compute_bytes,
                                          std::size_t units) {
  const int t = w.tensor;
  if (t <= 1) return std::vector<TensorSeconds>(units);
  const GroupSpan span = group_span(t, 1, links);
  const double tokens = w.tokens_per_rank / static_cast<double>(w.micro_steps);
  const double hidden_size = static_cast<double>(config.model.hidden_size);
  const double hidden = tokens * hidden_size * compute_bytes;
  const double ag = all_gather_seconds(links, hidden, t, span);
  const double rs = reduce_scatter_seconds(links, hidden, t, span);
  const double ar = all_reduce_seconds(links, hidden, t, span);
  const bool sp = w.sequence_parallel;
  const double norm = sp ? all_reduce_seconds(links, hidden_size * compute_bytes, t, span) : 0.0;
  const double region = sp ? ag + rs : ar;
  const double chunk =
      w.loss_chunk_tokens > 0 ? std::min(static_cast<double>(w.loss_chunk_tokens), tokens) : tokens;
  const double loss =
      3.0 * std::ceil(tokens / chunk) * all_reduce_seconds(links, 4.0 * chunk, t, span);
  std::vector<TensorSeconds> out(units, TensorSeconds{2 * region, 2 * region + 2 * norm});
  out.front() = {sp ? rs : ar, sp ? ag : 0.0};
  out.back() = {(sp ? ag : 0.0) + loss, (sp ? rs : ar) + norm};
  return out;
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

std::vector<UnitCost> unit_costs(const config::Config& config, DeviceKind device, int shard_group,
                                 int tensor) {
  const double compute_bytes = dtype_bytes(config, device);
  const bool double_quant = config.training.lora.double_quant;
  const auto& m = config.model;
  std::optional<arch::TensorParallelPlan> plan;
  if (tensor > 1) {
    config::Config at = config;
    at.parallel.tensor_parallel_size = tensor;
    plan = model::tensor_parallel_plan(at);
  }
  std::vector<layout::FlatLayout> layouts;
  for (int u = 0; u < model::num_units(m); ++u)
    layouts.push_back(model::unit_layout(m, config.training.lora,
                                         config.training.weight_decay_embeddings, u, shard_group,
                                         plan ? &*plan : nullptr));
  const auto gathered = [&](const layout::FlatLayout& l) {
    return static_cast<double>(l.padded(true) + l.padded(false)) * compute_bytes +
           static_cast<double>(quant::nf4_storage(l.quantized_padded(), double_quant).total());
  };
  const double attention = attention_flops_weight(config, tensor);
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
  w.tensor = static_cast<int>(config.parallel.tensor_parallel_size);
  w.sequence_parallel = config.parallel.sequence_parallel;
  w.loss_chunk_tokens = config.training.loss_chunk_tokens;
  return w;
}

StepWorkload at_tensor(const StepWorkload& workload, int t) {
  const std::int64_t steps = workload.micro_steps * t;
  if (t < 1 || steps % workload.tensor != 0) {
    char text[160];
    std::snprintf(text, sizeof text,
                  "at tensor parallel size %d the global batch is %g micro-steps per rank", t,
                  static_cast<double>(steps) / workload.tensor);
    throw UsageError("preflight", text);
  }
  StepWorkload w = workload;
  w.micro_steps = steps / workload.tensor;
  w.tokens_per_rank = workload.tokens_per_rank * t / workload.tensor;
  w.tensor = t;
  return w;
}

StepTimeModel::StepTimeModel(const config::Config& config, DeviceKind device, StepWorkload workload,
                             LinkModel links)
    : config_(config), device_(device), workload_(workload), links_(links) {}

StepTimeModel StepTimeModel::at_tensor(int t) const {
  return StepTimeModel(config_, device_, preflight::at_tensor(workload_, t), links_);
}

LayoutPrediction StepTimeModel::step_time(int n, int g, double compute_s) const {
  require_divides(n, g, workload_.tensor);
  return simulate(units_at(g), n, g, compute_s);
}

std::vector<UnitCost> StepTimeModel::units_at(int g) const {
  return unit_costs(config_, device_, g, workload_.tensor);
}

LayoutPrediction StepTimeModel::simulate(const std::vector<UnitCost>& units, int n, int g,
                                         double compute_s) const {
  const StepWorkload& w = workload_;
  const int t = w.tensor;
  const int r = n / (g * t);                         // replica groups
  const GroupSpan shard = group_span(g, t, links_);  // every t-th rank
  const GroupSpan replica = group_span(r, g * t, links_);
  double total_weight = 0;
  for (const auto& u : units) total_weight += u.flops_weight;
  if (total_weight == 0) total_weight = 1.0;
  const double per_micro = compute_s / static_cast<double>(w.micro_steps);
  const std::vector<TensorSeconds> tensor =
      tensor_seconds(config_, w, links_, dtype_bytes(config_, device_), units.size());
  std::vector<Op> forward, backward;
  for (std::size_t i = 0; i < units.size(); ++i) {
    const UnitCost& u = units[i];
    const double share = per_micro * u.flops_weight / total_weight;
    const bool reduces = u.reduced_bytes > 0;
    const double gather = all_gather_seconds(links_, u.gathered_bytes, g, shard);
    forward.push_back({share / (3.0 + w.recompute), gather, 0.0, 0.0, tensor[i].forward});
    // The backward reruns the forward's collectives when it recomputes.
    backward.push_back(
        {share * (2.0 + w.recompute) / (3.0 + w.recompute), w.regather && u.backward ? gather : 0.0,
         reduces ? reduce_scatter_seconds(links_, u.reduced_bytes, g, shard) : 0.0,
         reduces && r > 1 ? all_reduce_seconds(links_, u.replica_reduced_bytes, r, replica) : 0.0,
         tensor[i].backward + (w.recompute > 0 ? tensor[i].forward : 0.0)});
  }
  std::vector<Op> ops;
  for (std::int64_t micro = 0; micro < w.micro_steps; ++micro) {
    ops.insert(ops.end(), forward.begin(), forward.end());
    ops.insert(ops.end(), backward.rbegin(), backward.rend());
  }
  const double overlapped_body = overlapped_seconds(ops, w.replica_stream);
  LayoutPrediction p;
  p.world_size = n;
  p.shard_group = g;
  p.tensor = t;
  p.shard_span = shard;
  p.replica_span = replica;
  p.tensor_span = group_span(t, 1, links_);
  double comm_total = 0;
  for (const Op& op : ops) {
    comm_total += op.gather + op.reduce_scatter + op.all_reduce + op.tensor;
    p.compute_s += op.compute;
    p.gather_s += op.gather;
    p.reduce_scatter_s += op.reduce_scatter;
    p.all_reduce_s += op.all_reduce;
    p.tensor_s += op.tensor;
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
  const int t = workload_.tensor;
  const LayoutPrediction ref = step_time(one_node, one_node / t, compute_s);
  p.tokens_per_s_per_rank = workload_.tokens_per_rank / t / p.step_s;
  p.efficiency = ref.step_s / p.step_s;
  return p;
}

double StepTimeModel::calibrate(int ref_n, int ref_g, double ref_step_s) const {
  require_divides(ref_n, ref_g, workload_.tensor);
  const std::vector<UnitCost> units = units_at(ref_g);
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
  // torchtitan's rate is without tensor parallelism: calibrated at T = 1
  // when the batch allows it (a rank's compute per step is the same at any
  // T), else at this T.
  std::optional<StepTimeModel> without_tensor_parallelism;
  try {
    without_tensor_parallelism.emplace(at_tensor(1));
  } catch (const UsageError&) {
  }
  const StepTimeModel& reference = without_tensor_parallelism ? *without_tensor_parallelism : *this;
  const int t = reference.workload_.tensor;
  // torchtitan's 8 GPUs, rounded up to whole tensor groups (T = 3, T = 16).
  const int gpus = (kTorchtitanGpus + t - 1) / t * t;
  return reference.calibrate(
      gpus, gpus / t, reference.workload_.tokens_per_rank / t / kTorchtitanTokensPerSecondPerGpu);
}

std::vector<int> advice_groups(int ranks_per_node) {
  const int m = std::max(1, ranks_per_node);
  return {m, 2 * m, 4 * m, 8 * m};
}

std::vector<int> advice_tensors(int ranks_per_node) {
  std::vector<int> tensors;
  for (int t = 1; t <= std::max(1, ranks_per_node); t *= 2)
    if (ranks_per_node % t == 0) tensors.push_back(t);
  return tensors;
}

std::vector<Layout> candidate_layouts(const StepTimeModel& model, int n,
                                      const std::vector<int>& groups,
                                      const std::vector<int>& tensors,
                                      const std::function<bool(int)>& runs) {
  std::set<int> sizes(tensors.begin(), tensors.end());
  sizes.insert(model.workload().tensor);
  std::set<int> ranks{n};  // full sharding and the groups that divide n
  for (const int candidate : groups)
    if (candidate < n && n % candidate == 0) ranks.insert(candidate);
  std::vector<Layout> layouts;
  for (const int t : sizes) {
    if (t < 1 || n % t != 0 || model.links().ranks_per_node % t != 0) continue;
    try {
      at_tensor(model.workload(), t);
    } catch (const UsageError&) {
      continue;
    }
    if (runs && !runs(t)) continue;
    for (const int size : ranks)
      if (size % t == 0) layouts.push_back({size / t, t});
  }
  return layouts;
}

LayoutAdvice advise_layout(const StepTimeModel& model, int n, int g, double compute_s,
                           const std::vector<Layout>& candidates,
                           const std::function<bool(Layout)>& fits, double threshold) {
  const int t = model.workload().tensor;
  const Layout mine{g == 0 ? n / t : g, t};
  std::set<Layout> layouts(candidates.begin(), candidates.end());
  layouts.insert(mine);
  LayoutAdvice advice;
  bool any = false;
  for (const Layout& layout : layouts) {
    const LayoutPrediction p =
        model.at_tensor(layout.tensor).predict(n, layout.shard_group, compute_s);
    advice.candidates.push_back(p);
    if (layout == mine) advice.mine = p;
    if (!(layout == mine) && fits && !fits(layout)) {
      advice.left_out.push_back(layout);
      continue;
    }
    // Ties go to the larger group (less model state per rank), then the smaller T.
    const auto key = [](const LayoutPrediction& q) {
      return std::make_tuple(q.step_s, -q.shard_group * q.tensor, q.tensor);
    };
    if (!any || key(p) < key(advice.best)) advice.best = p;
    any = true;
  }
  advice.slower = advice.mine.step_s / advice.best.step_s - 1.0;
  advice.far = advice.slower > threshold;
  return advice;
}

std::string layout_name(int n, int g, int t) {
  const std::string name = g == 0 || g * t == n ? "full sharding (G=" + std::to_string(n / t) + ")"
                                                : "HSDP G=" + std::to_string(g);
  return t == 1 ? name : name + ", T=" + std::to_string(t);
}

}  // namespace nss::preflight
