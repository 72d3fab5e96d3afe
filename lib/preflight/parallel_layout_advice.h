// The step-time model behind the layout advice (check layout.parallel): one
// optimizer step of one rank at world size N, shard group G and tensor
// parallel size T — full sharding (G·T = N) or HSDP (ZeRO-3 within groups of
// G ranks of one tensor rank, replicated across the N/(G·T) groups), each
// rank's tensor-parallel parts — from the configured model's FSDP units
// (their real flat layouts at G and T), the compute time per step, the
// tensor group's collectives on the compute stream and the links.
// A port of scripts/bench/scale_model.py (docs/performance.md, "Scaling model
// (HSDP layout advice)"): the same constants, collective costs (nccl-tests
// bus-bandwidth factors, NCCL's latency constants), three-stream schedule,
// calibration and advice; tests/preflight/test_layout_advice.py checks that
// both give the same figures. Plain arithmetic, no torch.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "config/config.h"
#include "core/device_kind.h"

namespace nss::preflight {

/// How the ranks are connected (scale_model.py Network). Ranks are packed
/// ranks_per_node to a node, consecutively.
struct LinkModel {
  int ranks_per_node = 1;
  double intra_node_bytes_per_s = 0;  // bus bandwidth of a collective within a node, per rank
  double inter_node_bytes_per_s = 0;  // network bandwidth per rank between nodes
  /// false ("rails"): a group with m members on each of its nodes drives m
  /// NICs; true: every ring that leaves a node is held to one NIC.
  bool single_nic = false;
};

/// preflight.intra_node_bandwidth_gbs and inter_node_bandwidth_gbps (rails).
LinkModel configured_links(const config::PreflightConfig& preflight, int ranks_per_node);

/// Where the HSDP replica all-reduces run (scale_model.py --replica-stream):
/// their own stream, queued behind the shard group's collectives, or waited
/// for by the host.
enum class ReplicaStream { kSeparate, kShared, kBlocking };

/// Nodes a group of ranks spans and its members on each.
struct GroupSpan {
  int nodes = 1;
  int per_node = 1;
};

/// A group of n ranks r0, r0 + stride, ... (scale_model.py span).
GroupSpan group_span(int n, int stride, const LinkModel& links);

/// Collective times in seconds (nccl-tests conventions: `bytes` is the whole
/// buffer S); a group of n ranks spanning `span`.
double all_gather_seconds(const LinkModel& links, double bytes, int n, GroupSpan span);
double reduce_scatter_seconds(const LinkModel& links, double bytes, int n, GroupSpan span);
double all_reduce_seconds(const LinkModel& links, double bytes, int n, GroupSpan span);

/// One FSDP unit at a shard group size: its collectives' buffers per
/// micro-step and its share of the compute.
struct UnitCost {
  double gathered_bytes = 0;  // one all-gather's whole buffer (a tied head: the embedding too)
  double reduced_bytes = 0;   // the reduce-scatter's whole buffer; 0: nothing trainable
  double replica_reduced_bytes = 0;  // this rank's gradient shard, all-reduced across replicas
  double shard_parameters = 0;       // this rank's trainable elements (its optimizer state)
  double flops_weight = 0;           // forward FLOPs per token, to split the compute
  bool backward = true;  // false: the frozen embedding (LoRA), gathered once per micro-step
};

/// The units of `config`'s model, each tensor rank's parts at `tensor` ranks
/// sharded over `shard_group` ranks, in the compute dtype `device` resolves
/// to (fp32 reductions), from model::unit_layout: docs/architecture.md
/// "Communication per micro-step".
std::vector<UnitCost> unit_costs(const config::Config& config, DeviceKind device, int shard_group,
                                 int tensor = 1);

/// The per-rank workload a step time is predicted for (scale_model.py Scenario).
struct StepWorkload {
  double tokens_per_rank = 0;    // per optimizer step, of one data-parallel rank
  std::int64_t micro_steps = 1;  // micro-batches per optimizer step
  double recompute = 1;          // share of the forward the backward recomputes
  bool regather = true;          // a second all-gather per unit in the backward
  ReplicaStream replica_stream = ReplicaStream::kSeparate;
  double overlap = 1;  // 1: the prefetch schedule; 0: everything in sequence
  int tensor = 1;      // tensor parallel size T the micro-steps are at
  bool sequence_parallel = true;
  std::int64_t loss_chunk_tokens = 512;  // the head's loss all-reduces per chunk
};

/// The configured job's workload at `world_size` ranks.
StepWorkload configured_workload(const config::Config& config, int world_size);

/// The same job at T = t (scale_model.py at_tensor): the same global batch
/// and micro-batch over world / t data-parallel ranks, t / T times the
/// micro-steps, the same compute per rank; UsageError when they are not whole.
StepWorkload at_tensor(const StepWorkload& workload, int t);

/// One predicted step (scale_model.py step_time and predict).
struct LayoutPrediction {
  int world_size = 1;
  int shard_group = 1;  // ranks of one tensor rank
  int tensor = 1;
  double step_s = 0;        // with the workload's overlap
  double overlapped_s = 0;  // overlap 1
  double serial_s = 0;      // overlap 0
  double compute_s = 0;
  double comm_s = 0;  // every collective's time, hidden or not
  double exposed_comm_s = 0;
  double optimizer_s = 0;
  double gather_s = 0, reduce_scatter_s = 0, all_reduce_s = 0;
  double tensor_s = 0;              // the tensor group's collectives, on the compute stream
  double state_bytes_per_rank = 0;  // 16 per trainable element of the shard
  GroupSpan shard_span, replica_span, tensor_span;
  double tokens_per_s_per_rank = 0;
  double efficiency = 0;  // one node's step (full sharding, same T) / this step, same workload
};

/// The model for one job: its units at any shard group size, its workload and links.
class StepTimeModel {
 public:
  /// `config` must outlive the model.
  StepTimeModel(const config::Config& config, DeviceKind device, StepWorkload workload,
                LinkModel links);

  /// The same model at tensor parallel size t (at_tensor of the workload).
  StepTimeModel at_tensor(int t) const;

  /// One optimizer step at world n, shard group g and the workload's T
  /// (g·T divides n) with `compute_s` of forward and backward compute per
  /// step, no collectives.
  LayoutPrediction step_time(int n, int g, double compute_s) const;
  /// step_time with tokens/s and the efficiency against one node.
  LayoutPrediction predict(int n, int g, double compute_s) const;
  /// The compute per step that makes the step at (ref_n, ref_g) last
  /// ref_step_s (bisection); UsageError when the collectives alone take longer.
  double calibrate(int ref_n, int ref_g, double ref_step_s) const;
  /// scale_model.py's default calibration (torchtitan_compute): torchtitan's
  /// Llama-3.1-8B rate (5,762 tokens/s/GPU, full sharding on 8 GPUs) at this
  /// workload, at T = 1 when the global batch allows it, else at this T.
  double calibrate_on_torchtitan() const;

  const StepWorkload& workload() const { return workload_; }
  const LinkModel& links() const { return links_; }

 private:
  // The units at shard group g and the workload's T.
  std::vector<UnitCost> units_at(int g) const;
  LayoutPrediction simulate(const std::vector<UnitCost>& units, int n, int g,
                            double compute_s) const;

  const config::Config& config_;
  DeviceKind device_;
  StepWorkload workload_;
  LinkModel links_;
};

/// scale_model.py advise's threshold: a layout whose step is more than this
/// much longer than the best one's is "far from the best".
constexpr double kFarFromBest = 0.2;

/// The HSDP group sizes the preflight's advice tries, in ranks: ranks_per_node x
/// {1, 2, 4, 8} (scale_model.py's 8, 16, 32, 64 on 8-GPU nodes).
std::vector<int> advice_groups(int ranks_per_node);

/// The tensor parallel sizes the preflight's advice tries: 1, 2, 4, ... up
/// to the ranks per node, those dividing it.
std::vector<int> advice_tensors(int ranks_per_node);

/// A layout: shard group g (ranks of one tensor rank) and tensor parallel size t.
struct Layout {
  int shard_group = 1;
  int tensor = 1;
  bool operator<(const Layout& o) const {
    return tensor != o.tensor ? tensor < o.tensor : shard_group < o.shard_group;
  }
  bool operator==(const Layout& o) const {
    return shard_group == o.shard_group && tensor == o.tensor;
  }
};

struct LayoutAdvice {
  LayoutPrediction mine;                     // the chosen layout
  LayoutPrediction best;                     // the best candidate (ties: the larger group)
  double slower = 0;                         // mine.step_s / best.step_s - 1
  bool far = false;                          // slower > threshold
  std::vector<LayoutPrediction> candidates;  // every layout predicted, by T then group
  std::vector<Layout> left_out;              // layouts `fits` refused
};

/// The layouts the advice predicts at world n (scale_model.py candidates):
/// for each T of `tensors` that `runs` accepts (and that divides n and the
/// ranks per node), full sharding and the `groups` (in ranks, whole tensor
/// groups) that divide n.
std::vector<Layout> candidate_layouts(const StepTimeModel& model, int n,
                                      const std::vector<int>& groups,
                                      const std::vector<int>& tensors,
                                      const std::function<bool(int)>& runs);

/// scale_model.py advise: shard group g (0: full sharding) at world n and
/// the model's T against the `candidates`; those for which `fits` is false
/// (e.g. too much memory per rank) are left out (g never).
LayoutAdvice advise_layout(const StepTimeModel& model, int n, int g, double compute_s,
                           const std::vector<Layout>& candidates,
                           const std::function<bool(Layout)>& fits = nullptr,
                           double threshold = kFarFromBest);

/// "full sharding (G=16)", "HSDP G=8" or "HSDP G=4, T=2", as scale_model.py
/// names layouts (g 0: full sharding).
std::string layout_name(int n, int g, int t = 1);

}  // namespace nss::preflight
