// Deterministic micro-batches and whole-parameter views for the training
// tests: sample `id`'s tokens depend on nothing but the id, so any split of
// a global batch over ranks and micro-batches sees the same examples.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <torch/types.h>

#include "train/sharded_llama.h"
#include "train/training_step.h"

namespace nss::train::testing {

inline constexpr std::int64_t kSeqLen = 12;

/// `family` on the tests' tiny shape with every feature of its description
/// in use: windows shorter than a row, layers without RoPE, local RoPE
/// bases, a query scale of its own.
void use_family(config::ModelConfig& model, const std::string& family);

/// Tokens of global sample `id` (kSeqLen + 1 of them).
std::vector<std::int64_t> sample_tokens(std::int64_t id, std::int64_t vocab);

/// With `masked`, sample `id`'s first id % 5 labels are its prompt and every
/// seventh sample has no target at all, so ranks and micro-batches hold
/// different numbers of targets.
torch::Tensor target_mask_of(const std::vector<std::int64_t>& ids, bool masked);

/// The samples `ids` as one micro-batch; `packed`: rows of several documents.
MicroBatchTensors batch_of(const std::vector<std::int64_t>& ids, std::int64_t vocab,
                           std::int64_t step, std::uint64_t seed, bool masked = false,
                           bool packed = false);

/// Every unit's trainable parameters as whole tensors on the host (collective):
/// `flat` picks the rank's flat shard of a unit (its master, or the master's .grad).
std::map<std::string, torch::Tensor> gather_trainable(
    ShardedLlama& model, const std::function<torch::Tensor(fsdp::ShardedUnit&)>& flat);

}  // namespace nss::train::testing
