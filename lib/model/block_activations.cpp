#include "model/block_activations.h"

#include <algorithm>

namespace nss::model {
namespace {

// Rows attended apart spend sum(span^2) a row on scores and masks;
// otherwise one call covers the batch, seq^2 a row.
std::int64_t row_area(const BlockBatch& b) {
  if (b.row_spans.empty()) return b.seq * b.seq;
  std::int64_t area = 0;
  for (const std::int64_t span : b.row_spans) area += span * span;
  return area;
}

std::int64_t largest_span_area(const BlockBatch& b) {
  std::int64_t largest = b.row_spans.empty() ? b.seq : 0;
  for (const std::int64_t span : b.row_spans) largest = std::max(largest, span);
  return largest * largest;
}

}  // namespace

BlockActivationSizes block_activation_sizes(const BlockBatch& b) {
  BlockActivationSizes sizes;
  const std::int64_t n = b.tokens();
  sizes.tokens = n;
  sizes.hidden = n * b.hidden;
  sizes.queries = n * b.heads * b.head_dim;
  sizes.keys = n * b.kv_heads * b.head_dim;
  sizes.intermediate = n * b.intermediate;
  sizes.scores = b.batch * b.heads * row_area(b);
  sizes.mask = b.packed ? b.batch * row_area(b) : b.seq * b.seq;
  sizes.call_scores = b.rows_apart ? b.heads * largest_span_area(b) : sizes.scores;
  sizes.call_mask = b.rows_apart ? largest_span_area(b) : sizes.mask;
  sizes.gathered_rope = b.packed ? 2 * n * b.head_dim : 0;
  return sizes;
}

}  // namespace nss::model
