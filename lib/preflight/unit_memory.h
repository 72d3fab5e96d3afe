// What one FSDP unit allocates for one micro-batch, replayed on a
// MemoryTimeline: the decoder block, the head (final norm, LM head and the
// cross-entropy) and the embedding, each as the forward graph that
// activation checkpointing recomputes in backward (or keeps, without it), the
// backward through it, and the forward without a graph. The sequences follow
// lib/model/llama_functional.cpp op by op as libtorch 1.13 executes it on the
// CPU: which tensors each op allocates, which its backward saves, when
// temporaries and locals die, and in which order the autograd engine runs
// and accumulates. tests/train/synthetic_step_test.cpp checks them against
// the counting allocator.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "preflight/memory_timeline.h"

namespace nss::preflight {

/// The shapes one micro-batch runs through a unit with, in elements, and how it trains.
struct UnitShapes {
  std::int64_t batch = 1, seq = 1;
  std::int64_t hidden = 1, intermediate = 1, heads = 1, kv_heads = 1, head_dim = 1, vocab = 1;
  std::int64_t compute_bytes = 4;  // 4 fp32, 2 bf16
  bool lora = false;               // the base is frozen; adapters train
  std::vector<std::string> lora_targets;
  std::int64_t lora_rank = 8;
  bool lora_dropout = false;

  std::int64_t tokens() const { return batch * seq; }
  bool adapted(const std::string& projection) const;
};

/// A unit's graph for one micro-batch. `prefix` keeps the names of units
/// apart; `input` is the live allocation holding the unit's input;
/// `input_requires_grad` whether autograd differentiates with respect to it.
struct UnitCall {
  std::string prefix;
  std::string input;
  bool input_requires_grad = true;
  bool grad_mode = true;  // false: the checkpointed forward, no graph kept
};

/// Decoder block forward; allocates the output under `output` (boundary
/// activation when `grad_mode` is false, part of the graph otherwise).
void block_forward(MemoryTimeline& timeline, const UnitShapes& shapes, const UnitCall& call,
                   const std::string& output);

/// Backward through a block_forward graph with `grad_out` (live, not freed);
/// frees the graph; leaves the parameter gradients live under the prefix
/// and returns the name of the input gradient ("" when not needed).
std::string block_backward(MemoryTimeline& timeline, const UnitShapes& shapes, const UnitCall& call,
                           const std::string& grad_out);

/// Head forward (norm, logits, log-softmax, loss); the loss is a scalar.
void head_forward(MemoryTimeline& timeline, const UnitShapes& shapes, const UnitCall& call,
                  bool tied);

/// Backward through a head_forward graph; see block_backward.
std::string head_backward(MemoryTimeline& timeline, const UnitShapes& shapes, const UnitCall& call,
                          bool tied);

/// Embedding forward: the output under `output`.
void embedding_forward(MemoryTimeline& timeline, const UnitShapes& shapes, const UnitCall& call,
                       const std::string& output);

/// Backward of the embedding: its dense weight gradient.
void embedding_backward(MemoryTimeline& timeline, const UnitShapes& shapes, const UnitCall& call);

/// Frees every parameter gradient block/head/embedding_backward left under
/// `prefix`, one at a time, as FSDP copies them into the flat buffer.
void free_parameter_gradients(MemoryTimeline& timeline, const std::string& prefix);

}  // namespace nss::preflight
