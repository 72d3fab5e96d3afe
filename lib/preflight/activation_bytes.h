// The byte terms the memory model's closed-form activations share
// (unit_activations.cpp: the decoder block; head_activations.cpp: the head
// and the embedding): one micro-batch's tensor sizes and the RMSNorm's graph
// and peaks. Internal to lib/preflight.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>

#include "preflight/unit_activations.h"

namespace nss::preflight::activations {

inline constexpr std::uint64_t kF32 = 4;

inline std::uint64_t u64(std::int64_t v) {
  return static_cast<std::uint64_t>(v);
}

inline std::uint64_t when(bool condition, std::uint64_t bytes) {
  return condition ? bytes : 0;
}

// Rows attended apart spend sum(span^2) per row on scores and masks, one
// attention call per span; otherwise one call covers the batch, seq^2 a row.
inline std::uint64_t row_area(const UnitShapes& s) {
  if (s.row_spans.empty()) return u64(s.seq * s.seq);
  std::uint64_t area = 0;
  for (const std::int64_t span : s.row_spans) area += u64(span * span);
  return area;
}

inline std::uint64_t largest_span_area(const UnitShapes& s) {
  std::int64_t largest = s.row_spans.empty() ? s.seq : 0;
  for (const std::int64_t span : s.row_spans) largest = std::max(largest, span);
  return u64(largest * largest);
}

// Bytes of one micro-batch's tensors: `c` per element of the compute dtype,
// `n` tokens; nh, nq, nkv, ni are n x hidden, heads x head_dim,
// kv_heads x head_dim, intermediate; `scores` every attention score of the
// micro-batch (B x heads x the row's area); `mask` the hidden keys (bool
// S x S, or per row for packed rows); `call_*` what one attention call holds
// (all of it, or one span of one row when rows are attended apart); `rope`
// the cos/sin rows packed rows gather per q or k (B x S x head_dim each).
struct Bytes {
  std::uint64_t c, n, nh, nq, nkv, ni, scores, mask, call_scores, call_mask, rope;
  bool apart;
  explicit Bytes(const UnitShapes& s)
      : c(u64(s.compute_bytes)),
        n(u64(s.tokens())),
        nh(n * u64(s.hidden)),
        nq(n * u64(s.heads * s.head_dim)),
        nkv(n * u64(s.kv_heads * s.head_dim)),
        ni(n * u64(s.intermediate)),
        scores(u64(s.batch * s.heads) * row_area(s)),
        mask(s.packed ? u64(s.batch) * row_area(s) : u64(s.seq * s.seq)),
        call_scores(s.rows_apart ? u64(s.heads) * largest_span_area(s) : scores),
        call_mask(s.rows_apart ? largest_span_area(s) : mask),
        rope(s.packed ? 2 * n * u64(s.head_dim) * c : 0),
        apart(s.rows_apart) {}
  bool fp32() const { return c == kF32; }
};

// RMSNorm in fp32 (llama_functional rms_norm): x.to(f32) (bf16 runs), x^2
// and rsqrt kept for the input's gradient, the normalised value (in the
// compute dtype) kept for the weight's; `y` itself is counted by the caller.
inline std::uint64_t norm_graph(const Bytes& b, bool input_grad, bool weight_grad) {
  return when(input_grad, (b.fp32() ? 0 : kF32 * b.nh) + kF32 * b.nh + kF32 * b.n) +
         when(weight_grad, b.c * b.nh);
}

// The norm's own peak: fp32 x^2, rsqrt, normalised (and its bf16 copies).
inline std::uint64_t norm_peak(const Bytes& b) {
  return b.fp32() ? 3 * kF32 * b.nh + kF32 * b.n : 3 * kF32 * b.nh + 2 * b.c * b.nh + kF32 * b.n;
}

// The norm's backward above its kept tensors and incoming gradient: the
// fp32 gradient, x^2's gradient and pow's backward temporaries.
inline std::uint64_t norm_backward_peak(const Bytes& b) {
  return (b.fp32() ? 2 : 3) * kF32 * b.nh;
}

// A tensor's name on the timeline: the unit's prefix and its local name.
inline std::string name(const UnitCall& call, const char* local) {
  return call.prefix + local;
}

}  // namespace nss::preflight::activations
