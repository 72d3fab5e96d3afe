#include "data/token_batch.h"

#include <numeric>

#include "core/error.h"

namespace nss::data {

std::int64_t TokenBatch::target_tokens() const {
  return std::accumulate(target_mask.begin(), target_mask.end(), std::int64_t{0});
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
