#include "data/token_batch.h"

#include <numeric>
#include <type_traits>

#include "core/error.h"

namespace nss::data {

std::int64_t TokenBatch::target_tokens() const {
  return std::accumulate(target_mask.begin(), target_mask.end(), std::int64_t{0});
}

TokenBatch TokenBatch::slice(std::int64_t first, std::int64_t count) const {
  NSS_ASSERT(first >= 0 && count >= 0 && first + count <= rows, "data", "rows outside the batch");
  const auto part = [&](const auto& values, std::int64_t per_row) {
    using Values = std::decay_t<decltype(values)>;
    if (values.empty()) return Values();
    return Values(values.begin() + first * per_row, values.begin() + (first + count) * per_row);
  };
  TokenBatch out;
  out.rows = count;
  out.seq_len = seq_len;
  out.tokens = part(tokens, row_length());
  out.target_mask = part(target_mask, seq_len);
  out.positions = part(positions, seq_len);
  out.segments = part(segments, seq_len);
  out.sample_ids = part(sample_ids, 1);
  return out;
}

void read_windows(const TokenDataset& dataset, std::int64_t seq_len,
                  std::vector<std::int64_t> window_ids, TokenBatch& batch) {
  const std::int64_t row_length = seq_len + 1;
  batch.rows = static_cast<std::int64_t>(window_ids.size());
  batch.seq_len = seq_len;
  batch.tokens.resize(static_cast<std::size_t>(batch.rows * row_length));
  batch.target_mask.resize(static_cast<std::size_t>(batch.rows * seq_len));
  for (std::int64_t row = 0; row < batch.rows; ++row) {
    const std::int64_t first = window_ids[row] * seq_len;
    dataset.read(first, row_length, batch.tokens.data() + row * row_length);
    // The labels are tokens first + 1 .. first + seq_len.
    dataset.read_loss_mask(first + 1, seq_len, batch.target_mask.data() + row * seq_len);
  }
  batch.sample_ids = std::move(window_ids);
}

}  // namespace nss::data
