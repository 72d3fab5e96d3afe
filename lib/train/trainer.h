// The training loop of one rank: sharded model, optimizer state, dataloader,
// then for each step the micro-batches, the optimizer update, metrics,
// validation, checkpoints and the stop-signal agreement.
#pragma once

#include <memory>
#include <string>

#include <torch/types.h>

#include "config/config.h"
#include "core/error.h"
#include "plan/run_plan.h"

namespace nss::train {

class TrainingTopology;  // train/training_topology.h

struct TrainerContext {
  std::string run_dir;
  std::string run_id;                 // train/run_identity.h, recorded in every step
  int threads = 1;                    // intra-op threads of this rank
  torch::Device device{torch::kCPU};  // where the model computes (train/compute_device.h)
  plan::RunPlan plan;                 // how: the run plan of the job's device and world
};

/// Trains until training.max_steps or a stop signal over `topology`'s
/// communicators; returns the exit code (0, or 7/75 after a stop signal).
ExitCode train(const config::Config& config, TrainingTopology& topology, TrainerContext context);

}  // namespace nss::train
