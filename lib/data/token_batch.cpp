#include "data/token_batch.h"

#include "core/error.h"

namespace nss::data {

void read_windows(const TokenDataset& dataset, std::int64_t seq_len,
                  std::vector<std::int64_t> window_ids, TokenBatch& batch) {
  const std::int64_t row_length = seq_len + 1;
  batch.rows = static_cast<std::int64_t>(window_ids.size());
  batch.seq_len = seq_len;
  batch.tokens.resize(static_cast<std::size_t>(batch.rows * row_length));
  for (std::int64_t row = 0; row < batch.rows; ++row)
    dataset.read(window_ids[row] * seq_len, row_length, batch.tokens.data() + row * row_length);
  batch.sample_ids = std::move(window_ids);
}

}  // namespace nss::data
