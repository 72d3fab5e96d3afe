// The analytic per-rank memory model: a function of the configuration, the
// world size, the device kind and the micro-batch size, without libtorch. It
// replays one optimizer step of one rank (rank 0's shards) on a
// MemoryTimeline at the granularity of FSDP units — the sharded state
// (layout::ShardedStateLayout), each unit's gather, prefetch, forward,
// recompute, backward and gradient reduction, and the AdamW update (with
// parallel.offload_optimizer on a GPU: host state, device staging); a
// private run's DP-SGD step with its per-example gradients and clipped sums
// (per_example_memory.h) — with each unit's activations in closed form
// (unit_activations.h), and reports the highest point with its breakdown.
// The measured synthetic step decides the budget; this model extrapolates
// and cross-checks it. docs/preflight.md ("The memory model") lists the
// components and why it is built this way.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config/config.h"
#include "plan/run_plan.h"
#include "preflight/rank_facts.h"
#include "preflight/report.h"

namespace nss::preflight {

/// What a step whose micro-batch is not replayed is predicted to take:
/// 2^62 bytes, more than any rank has, and small enough that adding the
/// extras (memory_checks.h) to it cannot wrap.
constexpr std::uint64_t kUnreplayableBytes = std::uint64_t{1} << 62;

/// The tensor peak of one training step of one rank.
struct StepMemory {
  std::uint64_t peak_bytes = 0;
  std::string peak_phase;                   // where it happens, e.g. "backward of unit 3 (block 2)"
  std::vector<MemoryComponent> components;  // the peak by component (they sum to peak_bytes)
  std::uint64_t state_bytes = 0;            // masters, moments, frozen shards, RoPE tables
  /// parallel.offload_optimizer on a GPU: the fp32 masters and both moments
  /// in pinned host memory (12 bytes per shard element), not in peak_bytes,
  /// where the device's compute-dtype shards and staging slots count instead.
  std::uint64_t pinned_host_bytes = 0;
  /// The frozen base's bytes per parameter (compute dtype, or NF4 codes and
  /// scales for QLoRA's projections), unsharded; nullopt without a frozen base.
  std::optional<double> base_bytes_per_parameter;
};

/// Replays one optimizer step at `micro_batch_size` (all its micro-batches,
/// with training.global_batch_size / (micro x world) accumulation steps).
/// A micro-batch with a tensor beyond config::kMaxTensorElements (the budget
/// search probes sizes far above the configured one, which the configuration
/// checks keep within it) is not replayed: kUnreplayableBytes, a phase
/// saying so and no components.
/// `packed_row_spans`: packed rows' attention, every row like the costliest
/// (PreflightContext::packed_row_spans; empty: one document filling it).
/// `plan`: how the step runs (its world size, device and choices).
StepMemory predict_step_memory(const config::Config& config, const plan::RunPlan& plan,
                               std::int64_t micro_batch_size,
                               const std::vector<std::int64_t>& packed_row_spans = {});

/// The same under plan::make_run_plan(config, device, world_size).
StepMemory predict_step_memory(const config::Config& config, int world_size, DeviceKind device,
                               std::int64_t micro_batch_size,
                               const std::vector<std::int64_t>& packed_row_spans = {});

}  // namespace nss::preflight
