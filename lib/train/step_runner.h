// One kind of optimizer step behind one interface. A StepRunner reads the
// micro-batches of a step (as many as the source says the step has: the
// loader's count, which varies by step under Poisson sampling), runs the
// step's forward, backward, reductions and update, and says what else the
// kind of step needs: its loader options, the state a checkpoint keeps for
// it, whether a step without targets is skipped, and its figures. The
// trainer chooses the kind once (train/training_step_runner.h); the
// preflight's synthetic step runs the same runners on synthetic batches.
#pragma once

#include <cstdint>
#include <functional>

#include <torch/types.h>

#include "config/config.h"
#include "data/data_loader.h"
#include "optim/adamw.h"
#include "train/private_step.h"
#include "train/sharded_llama.h"
#include "train/sharded_state.h"
#include "train/step_metrics.h"
#include "train/training_step.h"

namespace nss::train {

class TrainingCheckpoints;

/// What every kind of step works on.
struct StepParts {
  ShardedLlama& model;
  ShardedState& state;
  const optim::AdamW& adamw;
  StepComms comms;
};

/// The optimizer of `training` (betas, eps, weight decay), for the trainer
/// and the synthetic step alike.
optim::AdamW adamw_of(const config::TrainingConfig& training);

/// The next micro-batch of the step being run, on the model's device; each
/// carries its step's micro-step count (MicroBatchTensors::micro_steps).
using MicroBatchSource = std::function<MicroBatchTensors()>;

class StepRunner {
 public:
  virtual ~StepRunner() = default;

  /// Runs step `step` (1-based) at learning rate `lr` over `next`'s
  /// micro-batches; `before_update` as in StepSettings.
  virtual StepOutcome run(std::int64_t step, double lr, const MicroBatchSource& next,
                          const std::function<void()>& before_update) = 0;

  /// `common` (sampling, packing, workers, resume position) as this kind of
  /// step reads its batches.
  virtual data::DataLoaderOptions loader_options(data::DataLoaderOptions common) const {
    return common;
  }
  /// Registers what this kind of step keeps across restarts; before resume().
  virtual void register_state(TrainingCheckpoints& checkpoints) { (void)checkpoints; }
  /// Whether a step whose global batch holds no target was skipped (no
  /// update); DP-SGD's still adds its noise and counts.
  virtual bool skips_steps_without_targets() const { return true; }
  /// Adds this kind's figures to a step's record (rank 0 only).
  virtual void annotate(StepRecord& record) const { (void)record; }
};

/// The usual step (train/training_step.h): clipping to `grad_clip` (0: off).
class OrdinaryStepRunner : public StepRunner {
 public:
  OrdinaryStepRunner(StepParts parts, double grad_clip) : parts_(parts), grad_clip_(grad_clip) {}
  StepOutcome run(std::int64_t step, double lr, const MicroBatchSource& next,
                  const std::function<void()>& before_update) override;

 private:
  StepParts parts_;
  double grad_clip_;
};

/// DP-SGD's step (train/private_step.h), keyed and scaled by `source`.
class PrivateStepRunner : public StepRunner {
 public:
  PrivateStepRunner(StepParts parts, const PrivateStepSource& source)
      : parts_(parts), source_(source) {}
  StepOutcome run(std::int64_t step, double lr, const MicroBatchSource& next,
                  const std::function<void()>& before_update) override;
  bool skips_steps_without_targets() const override { return false; }

 private:
  StepParts parts_;
  const PrivateStepSource& source_;
};

}  // namespace nss::train
