// One FSDP unit's activation memory for one micro-batch, in closed form, as a
// few coarse events on a MemoryTimeline: a forward's transient peak, then the
// tensors its graph keeps for backward (in two groups the backward frees at
// different times), the output; a backward's transient peak in its MLP half
// and in its attention half, the parameter gradients it leaves for the
// reduction and the gradient it passes on. Every size is a sum of
// per-token terms (and B x heads x S x S for attention scores) over the
// tensors lib/model/llama_functional.cpp creates; docs/preflight.md lists
// them. The measured synthetic step decides the budget; this estimate
// extrapolates and cross-checks it.
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
  bool packed = false;  // data.packing documents/none: gathered RoPE, per-row masks
  // Packed rows on the CPU attend document by document, one row at a time
  // (model::DocumentAttention): each row's scores are computed apart and
  // cat'ed; worst case one document filling the row.
  bool rows_apart = false;
  // The spans each row attends within (documents, then padding); empty: one
  // span of seq. Only with rows_apart: the mask path computes every score.
  std::vector<std::int64_t> row_spans;
  // DP-SGD: the adapters' gradients come per example, [rows, shape...].
  bool per_example = false;
  // The family's norms (lib/arch): per-head q/k norms, sandwich norms (two
  // more per block), Gemma's (1 + weight) scale.
  bool qk_norm = false, sandwich_norms = false, one_plus_norms = false;
  // training.loss_chunk_tokens: the head's fused linear + cross-entropy
  // (model/chunked_head.h) over chunks of this many tokens; 0: unchunked.
  std::int64_t loss_chunk_tokens = 0;
  // Causal attention without a mask through scaled_dot_product_attention
  // (plan::RunPlan::fused_attention; not for packed rows or sliding
  // windows, which pass a mask): its kernels keep q, k, v, the output and an
  // fp32 logsumexp per query and head, never the [S, S] scores and weights.
  bool fused_attention = false;
  // The CPU casts an elementwise op's input of another dtype by copying it
  // whole first; CUDA casts on the fly.
  bool casts_by_copy = true;
  // Sequence parallelism (parallel.sequence_parallel with T tensor ranks):
  // the residual stream, the norms and the boundary activations hold seq / T
  // of the sequence; attention and the MLP gather it whole. 1: no split.
  std::int64_t sequence_parts = 1;

  std::int64_t tokens() const { return batch * seq; }
  bool adapted(const std::string& projection) const;
};

/// A unit's graph for one micro-batch. `prefix` keeps the names of units
/// apart; `input_requires_grad` whether autograd differentiates with respect
/// to the unit's input; `grad_mode` false is the checkpointed forward (no graph kept).
/// `keeps_attention` (selective recompute, fsdp/kept_segments.h): a block's
/// checkpointed forward keeps its attention's graph under `prefix` +
/// "kept_attention", which its recompute (grad_mode) replays instead of
/// computing the attention again, and its backward frees.
struct UnitCall {
  std::string prefix;
  bool input_requires_grad = true;
  bool grad_mode = true;
  bool keeps_attention = false;
};

/// Decoder block forward; allocates the output under `output` (a boundary
/// activation when `grad_mode` is false, part of the graph otherwise).
void block_forward(MemoryTimeline& timeline, const UnitShapes& shapes, const UnitCall& call,
                   const std::string& output);

/// Backward through a block_forward graph (the caller holds the incoming
/// gradient); frees the graph; leaves the parameter gradients live under
/// `prefix` + "pg." and returns the name of the input gradient ("" when not needed).
std::string block_backward(MemoryTimeline& timeline, const UnitShapes& shapes,
                           const UnitCall& call);

/// Head forward (final norm, logits, log-softmax, loss); the loss is a scalar.
void head_forward(MemoryTimeline& timeline, const UnitShapes& shapes, const UnitCall& call);

/// Backward through a head_forward graph; a tied embedding's gradient goes
/// under `prefix` + "tg.embedding"; see block_backward.
std::string head_backward(MemoryTimeline& timeline, const UnitShapes& shapes, const UnitCall& call,
                          bool tied);

/// Embedding forward: the output under `output`.
void embedding_forward(MemoryTimeline& timeline, const UnitShapes& shapes, const UnitCall& call,
                       const std::string& output);

/// Backward of the embedding: its dense weight gradient.
void embedding_backward(MemoryTimeline& timeline, const UnitShapes& shapes, const UnitCall& call);

}  // namespace nss::preflight
