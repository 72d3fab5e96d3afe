// The preflight report rank 0 builds: every check in order, the summaries the
// memory and model checks fill in, and the go/no-go decision derived from them.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "data/example_statistics.h"
#include "preflight/check.h"
#include "privacy/privacy_plan.h"

namespace nss::preflight {

/// preflight.json "model": exact parameter counts (null until the model check ran).
struct ModelSummary {
  std::optional<std::int64_t> parameters;
  std::optional<std::int64_t> trainable_parameters;
};

struct MemoryComponent {
  std::string name;  // e.g. "master_shards", "dataloader_queue"
  std::uint64_t bytes = 0;
};

/// One synthetic-step measurement at one micro-batch size.
struct MemoryMeasurement {
  std::int64_t micro_batch_size = 0;
  std::optional<std::uint64_t>
      tensor_peak_bytes;  // last step's tensor peak; nullopt: out of memory
  double seconds = 0;
};

/// preflight.json "memory": one rank's budget, prediction and measurement.
/// Peaks include `fixed_overhead_bytes` and, on CPU, the dataloader queue and
/// async-checkpoint staging (host memory the tensor counter does not see).
struct MemorySummary {
  std::string device;  // "cpu" or "cuda"
  std::optional<std::uint64_t> capacity_bytes;
  std::optional<std::uint64_t> budget_bytes;
  std::optional<std::uint64_t> predicted_peak_bytes;
  std::optional<std::uint64_t> measured_peak_bytes;
  std::vector<MemoryComponent> components;
  std::optional<std::int64_t> max_micro_batch_size;
  std::optional<std::uint64_t> fixed_overhead_bytes;  // CPU: baseline resident; GPU: CUDA context
  std::string peak_phase;                             // where the predicted peak happens
  std::optional<double> base_bytes_per_parameter;     // the frozen base (LoRA), as stored
  std::vector<MemoryMeasurement> measurements;        // the synthetic steps, in order
};

/// preflight.json "dataloader": the host-memory estimate and the first batch.
struct DataloaderSummary {
  std::optional<std::uint64_t> estimated_bytes;  // the node with the highest share
  std::optional<std::uint64_t> available_bytes;  // that node's usable host memory
  std::optional<double> first_batch_s;
};

/// preflight.json "privacy" (privacy.enabled): the DP-SGD plan over the
/// training data, the batches it samples, what a step at the largest of them
/// costs, and the data's examples. Never the key.
struct PrivacySummary {
  std::optional<privacy::PrivacyPlan> plan;  // nullopt: it could not be made, see error
  std::string error, error_hint;             // why not, and what to change
  ExitCode error_code = ExitCode::kOk;
  double epsilon = 0;                        // what plan->planned_steps spend
  std::int64_t batch_bound = 0;              // exceeded with probability kPrivacyBatchTail
  std::int64_t micro_steps_expected = 0;     // per rank, at the expected batch
  std::int64_t micro_steps_bound = 0;        // per rank, at batch_bound
  std::optional<double> bound_step_seconds;  // the synthetic step at micro_steps_bound
  data::ExampleStatistics examples;
};

/// One layout layout.parallel predicted at this world size.
struct LayoutOption {
  int shard_group_size = 0;  // G (ranks of one tensor rank); world / T is full sharding
  int tensor_parallel_size = 1;
  double step_s = 0;
  double efficiency = 0;  // one node's step (full sharding, same T) / this step, same work per rank
  double exposed_comm_s = 0;
  double tensor_s = 0;              // the tensor group's collectives on the compute stream
  double state_bytes_per_rank = 0;  // 16 per trainable parameter of the shard
  bool fits_memory = true;          // predicted within the memory budget (or no worse than G's)
};

/// preflight.json "parallel" (layout.parallel): where the ranks run, the
/// shard groups over the nodes, and the predicted step of this layout and of
/// the best one (lib/preflight/parallel_layout_advice.h, scale_model.py's model).
struct ParallelSummary {
  int shard_group_size = 1;      // G resolved: world / T under full sharding
  int tensor_parallel_size = 1;  // T
  int replica_groups = 1;        // N / (G T)
  int nodes = 1;                 // distinct hosts
  int ranks_per_node = 1;        // the most ranks on any node
  int shard_group_nodes = 1;     // the most nodes one shard group spans (by host name)
  bool whole_nodes = true;  // every node's ranks are in one shard group, or groups within nodes
  std::optional<double> compute_s;  // forward + backward per optimizer step the model was given
  std::string compute_source;       // "synthetic_step" or "torchtitan_rate"; empty: none
  double intra_node_bandwidth_gbs = 0;
  double inter_node_bandwidth_gbps = 0;
  std::optional<double> step_s, efficiency, exposed_comm_s;  // this layout
  std::optional<int> best_shard_group_size, best_tensor_parallel_size;
  std::optional<double> best_step_s, best_efficiency;
  std::optional<double> slower;       // step_s / best_step_s - 1
  double threshold = 0;               // "far from the best" above this
  std::vector<LayoutOption> layouts;  // every layout compared, ascending T, then G
};

/// The probability with which a step's batch exceeds PrivacySummary::batch_bound.
constexpr double kPrivacyBatchTail = 1e-6;

/// What every rank learns: go, or no-go with an exit code and one line.
struct Verdict {
  bool go = true;
  ExitCode code = ExitCode::kOk;
  std::string reason;  // one line
  std::string hint;    // the deciding check's remediation
};

class PreflightReport {
 public:
  explicit PreflightReport(std::string device) { memory.device = std::move(device); }

  /// Appends a check (order is the order of the table and of preflight.json).
  void add(Check check);

  /// Runs `body` (which adds checks). If it throws, adds a failing check `id`
  /// with the error's exit code (out of memory: 3; anything unexpected: 1) —
  /// a check that crashes is a failure, never a skip.
  void run_guarded(const std::string& id, const std::function<void()>& body);

  const std::vector<Check>& checks() const { return checks_; }

  /// The check with this id, or nullptr.
  const Check* find(const std::string& id) const;

  /// True when the check exists and did not fail or get skipped (later
  /// checks that depend on it skip themselves otherwise).
  bool usable(const std::string& id) const;

  /// The decision: the first failure decides the code; with `fail_on_warning`
  /// the first warning does when nothing failed. Skipped checks never decide.
  Verdict verdict(bool fail_on_warning) const;

  ModelSummary model;
  MemorySummary memory;
  DataloaderSummary dataloader;
  std::optional<PrivacySummary> privacy;
  std::optional<ParallelSummary> parallel;

 private:
  std::vector<Check> checks_;
};

}  // namespace nss::preflight
