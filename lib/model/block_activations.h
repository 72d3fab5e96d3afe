// The size table of a decoder block's activations: how many elements each
// tensor decoder_block_forward (llama_functional.cpp) creates for one
// micro-batch holds, in the spirit of llm.c's single activation size table.
// The forward's libtorch ops allocate these tensors; the preflight's memory
// model (lib/preflight/activation_bytes.h) prices its byte terms from this
// table, and model_test checks the table against the tensors the forward
// makes, so a change to the forward's shapes shows up in one place.
// Plain C++ (no libtorch): the preflight links it.
#pragma once

#include <cstdint>
#include <vector>

namespace nss::model {

/// One micro-batch through a decoder block: its shapes and how its rows attend.
struct BlockBatch {
  std::int64_t batch = 1, seq = 1;
  std::int64_t hidden = 1, intermediate = 1, heads = 1, kv_heads = 1, head_dim = 1;
  // Packed rows of documents: RoPE gathers its tables per position and the
  // mask is per row ([B, 1, S, S]) instead of one causal [S, S].
  bool packed = false;
  // Packed rows attended document by document (DocumentAttention::kPerDocument):
  // one attention call per span, so a call holds one span's scores.
  bool rows_apart = false;
  // The spans each row attends within (documents, then padding); empty: one
  // span of seq. Only with rows_apart: the mask path computes every score.
  std::vector<std::int64_t> row_spans;

  std::int64_t tokens() const { return batch * seq; }
};

/// Elements per tensor of one block's forward for one micro-batch.
struct BlockActivationSizes {
  std::int64_t tokens = 0;  // B x S: RMSNorm's per-token rsqrt
  // [B, S, hidden]: the input's norm x, h = hidden + o_proj(...), its norm y,
  // the block's output.
  std::int64_t hidden = 0;
  std::int64_t queries = 0;       // [B, heads, S, D]: q and the attention's output
  std::int64_t keys = 0;          // [B, kv_heads, S, D]: k and v each
  std::int64_t intermediate = 0;  // [B, S, intermediate]: gate, up and their product
  // Every attention score of the micro-batch: B x heads x each row's area
  // (S^2, or the sum of its spans' squares when rows are attended apart).
  std::int64_t scores = 0;
  // The hidden keys: one causal bool [S, S], or packed rows' [B, 1, S, S].
  std::int64_t mask = 0;
  // What one attention call holds: all of the above, or with rows attended
  // apart one span of one row (heads x span^2 scores, span^2 mask).
  std::int64_t call_scores = 0, call_mask = 0;
  // Packed rows: the cos and sin rows RoPE gathers for q or k, [B, 1, S, D] each.
  std::int64_t gathered_rope = 0;
};

/// The table for `batch`: every size a product of its shapes.
BlockActivationSizes block_activation_sizes(const BlockBatch& batch);

}  // namespace nss::model
