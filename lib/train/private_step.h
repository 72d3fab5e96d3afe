// One DP-SGD optimizer step (docs/privacy.md). Each example's loss L_i is the
// mean over its target tokens; its gradient (LoRA adapters, all units) is
// clipped to norm C (fsdp/per_example_gradients.h), the clipped gradients
// are summed over the global batch, N(0, sigma^2 C^2) is added once per
// element — each rank noising the elements it owns, keyed by (tensor name,
// element index), so the noise is the same at any world size — and the sum
// is divided by the expected batch size q·n. Clipping replaces
// training.grad_clip; the gradient norm reported and the decision to skip a
// non-finite step look only at the noised gradient.
#pragma once

#include <functional>

#include "optim/adamw.h"
#include "privacy/secret_key.h"
#include "train/sharded_llama.h"
#include "train/sharded_state.h"
#include "train/training_step.h"

namespace nss::train {

struct PrivateStepSettings {
  std::int64_t step = 1;         // 1-based training step (noise and dropout keys, schedule)
  std::int64_t micro_steps = 1;  // the same on every rank (padding rows weigh nothing)
  double lr = 0;
  double max_grad_norm = 1.0;     // C
  double noise_multiplier = 0.0;  // sigma
  double expected_batch = 1.0;    // q·n, the update's denominator
  const privacy::NoiseKey* noise_key = nullptr;
  /// Runs after the backward passes, before the masters and moments change.
  std::function<void()> before_update;
};

/// What a DP-SGD step is keyed and scaled by: the run's plan and key, or the
/// synthetic step's stand-ins.
class PrivateStepSource {
 public:
  virtual ~PrivateStepSource() = default;
  /// The settings of step `step` with `micro_steps` micro-batches.
  virtual PrivateStepSettings step_settings(std::int64_t step, std::int64_t micro_steps, double lr,
                                            std::function<void()> before_update) const = 0;
};

/// Writes the private gradient into the gradient leaves' .grad (collective). The
/// outcome's loss is the mean of L_i over the global batch's examples (0 for
/// an empty batch) and its grad_norm the noised gradient's norm.
StepOutcome private_gradients(
    ShardedLlama& model, ShardedState& state, const PrivateStepSettings& settings,
    const std::function<MicroBatchTensors(std::int64_t)>& next_micro_batch, StepComms comms);

/// private_gradients, then AdamW unless the noised gradient is not finite.
StepOutcome run_private_step(ShardedLlama& model, ShardedState& state, const optim::AdamW& adamw,
                             const PrivateStepSettings& settings,
                             const std::function<MicroBatchTensors(std::int64_t)>& next_micro_batch,
                             StepComms comms);

}  // namespace nss::train
