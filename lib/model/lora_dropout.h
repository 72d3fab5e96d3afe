// LoRA dropout whose randomness is a function of (seed, step, global sample,
// layer, projection, position, feature) only: the recompute of activation
// checkpointing replays the same mask, and the result does not depend on how
// the samples of a global batch are spread over ranks and micro-steps.
#pragma once

#include <cstdint>
#include <vector>

#include <torch/types.h>

namespace nss::model {

/// The randomness of one decoder block's LoRA dropout in one micro-batch.
struct DropoutKey {
  std::uint64_t seed = 0;
  std::int64_t step = 0;                 // optimizer step
  std::vector<std::int64_t> sample_ids;  // global sample index of each row of the micro-batch
  std::int64_t layer = 0;                // decoder block index (0-based)
};

/// Inverted-dropout multiplier for input `x` [B, S, features] of projection
/// `projection` (index into projection_names()): 0 or 1 / (1 - p) per
/// element, in x's dtype and device. Element (b, s, j) depends only on the key
/// with sample_ids[b], the projection and s * features + j. With
/// `all_features` > 0, x holds features [first_feature, first_feature +
/// x.size(2)) of an input of that many (a row-parallel layer's part under
/// tensor parallelism) and gets that part of the whole input's multiplier.
torch::Tensor lora_dropout_multiplier(const torch::Tensor& x, const DropoutKey& key, int projection,
                                      double p, std::int64_t first_feature = 0,
                                      std::int64_t all_features = 0);

}  // namespace nss::model
