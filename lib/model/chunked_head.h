// The LM head's linear layer and cross-entropy fused over chunks of tokens,
// so that the [T, vocab] logits, the largest activation of a step at a large
// vocabulary, exist one chunk of tokens at a time.
// Each token's loss weight is known in forward, so each chunk's gradients
// with respect to the (normed) hidden states and the head weight are
// computed there too and kept, fp32; backward only scales them by the
// incoming gradient, it never recomputes the chunks. The price: an
// unsharded fp32 [vocab, hidden] head-weight gradient held from the head's
// forward to its backward (docs/architecture.md, "The loss lives in the head unit").
#pragma once

#include <cstdint>

#include <torch/types.h>

#include "comm/communicator.h"

namespace nss::model {

/// A head weight that holds some rows of the vocabulary (split over tensor
/// ranks): the log-sum-exp and the target's logit are summed over `group`,
/// whose ranks hold the other rows, and no rank ever holds all logits.
struct VocabShard {
  comm::Communicator* group = nullptr;
  std::int64_t first = 0;  // the token id of the weight's row 0
  std::int64_t valid = 0;  // rows that are tokens; the rest pad the vocabulary, never a target
};

/// sum_t weights_t * CE(normed_t W^T, targets_t) over `chunk_tokens` tokens
/// at a time. normed [T, H] and weight [V, H] in the compute dtype (the
/// logits in it, as the unfused head, then float32 for the log-sum-exp),
/// targets int64 [T], weights float32 [T]. Differentiable with respect to
/// `normed` and `weight` when grad mode is on and they require grad (a
/// frozen weight's gradient is never computed); chunk_tokens >= 1. With
/// `shard` the weight is this rank's rows of the vocabulary: the loss is the
/// whole vocabulary's on every rank of the group, the gradient of `normed`
/// this rank's part of it (summed over the group by whoever copied `normed`
/// to it: model/tensor_parallel_ops.h).
torch::Tensor chunked_linear_cross_entropy(const torch::Tensor& normed, const torch::Tensor& weight,
                                           const torch::Tensor& targets,
                                           const torch::Tensor& weights, std::int64_t chunk_tokens,
                                           const VocabShard* shard = nullptr);

}  // namespace nss::model
