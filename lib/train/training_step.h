// One optimizer step: forward/backward over this rank's micro-batches
// (gradients accumulate in the masters' .grad), the global loss and gradient
// norm (one all-reduce each), clipping, and AdamW — or, when the loss or the
// norm is not finite, no update at all on any rank.
#pragma once

#include <functional>
#include <vector>

#include <torch/types.h>

#include "data/token_batch.h"
#include "optim/adamw.h"
#include "train/sharded_llama.h"
#include "train/sharded_state.h"

namespace nss::train {

/// One micro-batch as tensors: inputs/targets int64 [rows, seq_len].
struct MicroBatchTensors {
  torch::Tensor inputs, targets;
  MicroBatchRandomness randomness;
};

/// A dataloader batch as tensors, its dropout keyed by (seed, step, sample).
MicroBatchTensors micro_batch_tensors(const data::TokenBatch& batch, std::uint64_t seed,
                                      std::int64_t step);

/// The micro-batch with its token tensors moved to `device` (as is on CPU).
MicroBatchTensors on_device(MicroBatchTensors batch, const torch::Device& device);

struct StepOutcome {
  double loss = 0;       // mean token loss of the global batch
  double grad_norm = 0;  // before clipping
  double lr = 0;
  bool skipped = false;  // loss or norm not finite: nothing was applied
};

struct StepSettings {
  std::int64_t step = 1;         // 1-based training step (schedule, dropout keys)
  std::int64_t micro_steps = 1;  // gradient-accumulation steps on this rank
  double loss_scale = 1.0;       // 1 / tokens in the global batch
  double lr = 0;
  double grad_clip = 0;  // 0: off
  /// Runs after the backward passes, before the masters and moments change
  /// (an asynchronous checkpoint may still be copying them).
  std::function<void()> before_update;
};

/// Runs one optimizer step; `next_micro_batch(i)` supplies micro-batch i.
StepOutcome run_training_step(
    ShardedLlama& model, ShardedState& state, const optim::AdamW& adamw,
    const StepSettings& settings,
    const std::function<MicroBatchTensors(std::int64_t)>& next_micro_batch,
    comm::Communicator& comm);

}  // namespace nss::train
