// The preflight of a training job: the built-in checks of lib/preflight plus
// the ones that need lib/data, the model and libtorch, plugged in as
// PreflightPlan stages — lib/data's dataset validation, the first batch
// through the real dataloader, the privacy plan, the parameter count of the
// built model, the analytic memory model, the measured synthetic steps, the
// memory budget and the privacy budget.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include <torch/types.h>

#include "config/config.h"
#include "preflight/preflight.h"
#include "preflight/report.h"

namespace nss::memory {
class MemoryMeter;
}

namespace nss::train {

/// The micro-batch sizes the synthetic step measures: the configured one and
/// a second divisor of global_batch_size / world_size (the next smaller, else
/// the next larger) so the budget can fit a line; one size when no other divides.
std::vector<std::int64_t> synthetic_micro_batches(const config::Config& config, int world_size);

/// "model.parameters": the exact count from the parameter shapes against the
/// count of the built model (`built_total`, `built_trainable`); a mismatch is
/// a bug in nss_hpc (exit 1). Fills report.model.
preflight::Check check_parameter_count(const config::Config& config, std::int64_t built_total,
                                       std::int64_t built_trainable,
                                       preflight::PreflightReport& report);

/// "memory.synthetic_step" (and "model.parameters"): builds rank 0's own
/// sharded model and optimizer state on a LocalCommunicator(world size), runs
/// preflight.synthetic_steps full optimizer steps at each size of
/// synthetic_micro_batches, capped at the budget (running out is a fail, exit
/// 3), and records the measurements in report.memory. A private run's step
/// is DP-SGD's, and with report.privacy planned it also times a step at the
/// batch bound (report.privacy->bound_step_seconds). Needs memory.model first.
void run_synthetic_step_checks(const preflight::PreflightContext& context,
                               preflight::PreflightReport& report, memory::MemoryMeter& meter);

/// The whole plan for `config`; `compute_device` is where training will run
/// and the synthetic step measures.
preflight::PreflightPlan training_preflight_plan(const config::Config& config,
                                                 const torch::Device& compute_device);

}  // namespace nss::train
