// The byte terms the memory model's closed-form activations share
// (unit_activations.cpp: the decoder block; head_activations.cpp: the head
// and the embedding): one micro-batch's tensor sizes, from the size table
// next to the forward (model/block_activations.h), and the RMSNorm's graph
// and peaks. Internal to lib/preflight.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>

#include "model/block_activations.h"
#include "preflight/unit_activations.h"

namespace nss::preflight::activations {

inline constexpr std::uint64_t kF32 = 4;

inline std::uint64_t u64(std::int64_t v) {
  return static_cast<std::uint64_t>(v);
}

inline std::uint64_t when(bool condition, std::uint64_t bytes) {
  return condition ? bytes : 0;
}

// The table's fields for this unit's shapes (model/block_activations.h).
inline model::BlockBatch block_batch(const UnitShapes& s) {
  model::BlockBatch b;
  b.batch = s.batch;
  b.seq = s.seq;
  b.hidden = s.hidden;
  b.intermediate = s.intermediate;
  b.heads = s.heads;
  b.kv_heads = s.kv_heads;
  b.head_dim = s.head_dim;
  b.packed = s.packed;
  b.rows_apart = s.rows_apart;
  b.row_spans = s.row_spans;
  return b;
}

// Bytes of one micro-batch's tensors: the block's size table
// (model/block_activations.h) priced at `c` bytes per element of the compute
// dtype (the mask's bool elements at one byte): `n` tokens; nh, nq, nkv, ni
// the hidden, query, key and intermediate tensors; `scores`, `mask`, the
// `call_*` one attention call holds and `rope` the gathered cos/sin of a
// packed q or k; `ns`, `nhs` the tokens and hidden states of the residual
// stream (split along the sequence under sequence parallelism, else n, nh).
struct Bytes {
  std::uint64_t c, n, nh, nq, nkv, ni, scores, mask, call_scores, call_mask, rope, ns, nhs;
  bool apart;
  std::uint64_t normed;  // bytes per element of the normalised value a norm keeps
  std::uint64_t heads, kv_heads;
  explicit Bytes(const UnitShapes& s) : Bytes(s, model::block_activation_sizes(block_batch(s))) {}
  Bytes(const UnitShapes& s, const model::BlockActivationSizes& e)
      : c(u64(s.compute_bytes)),
        n(u64(e.tokens)),
        nh(u64(e.hidden)),
        nq(u64(e.queries)),
        nkv(u64(e.keys)),
        ni(u64(e.intermediate)),
        scores(u64(e.scores)),
        mask(u64(e.mask)),
        call_scores(u64(e.call_scores)),
        call_mask(u64(e.call_mask)),
        rope(u64(e.gathered_rope) * c),
        ns(n / u64(s.sequence_parts)),
        nhs(nh / u64(s.sequence_parts)),
        apart(s.rows_apart),
        normed(s.one_plus_norms ? kF32 : c),
        heads(u64(s.heads)),
        kv_heads(u64(s.kv_heads)) {}
  bool fp32() const { return c == kF32; }
};

// RMSNorm in fp32 (llama_functional rms_norm) over `elements` in `rows`
// rows: x.to(f32) (bf16 runs), x^2 and rsqrt kept for the input's gradient,
// the normalised value kept for the weight's (in the compute dtype; in fp32
// for Gemma's (1 + weight)); `y` itself is counted by the caller.
inline std::uint64_t norm_graph(const Bytes& b, std::uint64_t elements, std::uint64_t rows,
                                bool input_grad, bool weight_grad) {
  return when(input_grad, (b.fp32() ? 0 : kF32 * elements) + kF32 * elements + kF32 * rows) +
         when(weight_grad, b.normed * elements);
}

// The same over the residual stream (a block's or the head's norm).
inline std::uint64_t norm_graph(const Bytes& b, bool input_grad, bool weight_grad) {
  return norm_graph(b, b.nhs, b.ns, input_grad, weight_grad);
}

// The norm's own peak: fp32 x^2, rsqrt, normalised (and its bf16 copies).
inline std::uint64_t norm_peak(const Bytes& b) {
  return b.fp32() ? 3 * kF32 * b.nhs + kF32 * b.ns
                  : 3 * kF32 * b.nhs + 2 * b.c * b.nhs + kF32 * b.ns;
}

// The norm's backward above its kept tensors and incoming gradient: the
// fp32 gradient, x^2's gradient and pow's backward temporaries.
inline std::uint64_t norm_backward_peak(const Bytes& b) {
  return (b.fp32() ? 2 : 3) * kF32 * b.nhs;
}

// A tensor's name on the timeline: the unit's prefix and its local name.
inline std::string name(const UnitCall& call, const char* local) {
  return call.prefix + local;
}

}  // namespace nss::preflight::activations
