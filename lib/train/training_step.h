// One optimizer step: the global batch's target tokens T (one all-reduce,
// before the first backward), forward/backward over this rank's micro-batches
// with per-token weights mask_t / T (gradients accumulate in the gradient
// leaves' .grad: ShardedState::gradient_leaves), the global loss and gradient norm (one all-reduce
// each), clipping, and AdamW — or, when the loss or the norm is not finite or T is 0, no update at
// all on any rank. The loss is the mean over the global batch's target tokens whatever the ranks
// and the micro-batch split.
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include <torch/types.h>

#include "data/token_batch.h"
#include "model/llama_functional.h"
#include "optim/adamw.h"
#include "train/sharded_llama.h"
#include "train/sharded_state.h"

namespace nss::train {

/// One micro-batch as tensors: inputs/targets int64 [rows, seq_len],
/// target_mask float32 [rows, seq_len] (1 = the label is a target); packed
/// rows also positions and segments int64 [rows, seq_len] (undefined for
/// windows).
struct MicroBatchTensors {
  torch::Tensor inputs, targets, target_mask;
  torch::Tensor positions, segments;
  std::int64_t micro_steps = 1;  // of its optimizer step on every rank (the loader's count)
  MicroBatchRandomness randomness;
};

/// A dataloader batch as tensors, its dropout keyed by (seed, step, sample).
MicroBatchTensors micro_batch_tensors(const data::TokenBatch& batch, std::uint64_t seed,
                                      std::int64_t step);

/// The attention layout of packed rows (positions and segments defined),
/// attending as `how` (the run plan's plan::PackedAttention), else nullopt.
std::optional<model::DocumentMask> document_mask_of(const MicroBatchTensors& batch,
                                                    model::DocumentAttention how);

/// The micro-batch with its token tensors moved to `device` (as is on CPU).
MicroBatchTensors on_device(MicroBatchTensors batch, const torch::Device& device);

struct StepOutcome {
  double loss = 0;       // mean loss over the global batch's target tokens
  double grad_norm = 0;  // before clipping
  double lr = 0;
  bool skipped = false;            // loss or norm not finite, or no target: nothing was applied
  std::int64_t target_tokens = 0;  // in the global batch
};

/// The host communicators of a step's scalar reductions: the loss and the
/// target counts are summed over every rank (`world`; the `tensor_ranks`
/// ranks of a tensor group read the same micro-batches, so the sums divide
/// by it); the squared gradient norm over `shard_group`, whose shards cover
/// the model once (under hybrid sharding the replicas hold the same
/// gradient shards; with tensor parallelism the ranks of one replica).
struct StepComms {
  StepComms(comm::Communicator& all)  // NOLINT: no hybrid sharding
      : world(all), shard_group(all) {}
  StepComms(comm::Communicator& every_rank, comm::Communicator& one_replica, int tensor = 1)
      : world(every_rank), shard_group(one_replica), tensor_ranks(tensor) {}
  comm::Communicator& world;
  comm::Communicator& shard_group;
  int tensor_ranks = 1;
};

struct StepSettings {
  std::int64_t step = 1;         // 1-based training step (schedule, dropout keys)
  std::int64_t micro_steps = 1;  // gradient-accumulation steps on this rank
  double lr = 0;
  double grad_clip = 0;  // 0: off
  /// Runs after the backward passes, before the masters and moments change
  /// (an asynchronous checkpoint may still be copying them).
  std::function<void()> before_update;
};

/// Runs one optimizer step; `next_micro_batch(i)` supplies micro-batch i
/// (all are asked for before the first forward).
StepOutcome run_training_step(
    ShardedLlama& model, ShardedState& state, const optim::AdamW& adamw,
    const StepSettings& settings,
    const std::function<MicroBatchTensors(std::int64_t)>& next_micro_batch, StepComms comms);

}  // namespace nss::train
