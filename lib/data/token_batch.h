// A batch of token windows as the trainer and nss_eval consume it: plain
// int64 buffers, no libtorch (the trainer wraps them in tensors).
#pragma once

#include <cstdint>
#include <vector>

#include "data/token_dataset.h"

namespace nss::data {

/// The sample id of a row that holds no sample (Poisson micro-batches).
inline constexpr std::int64_t kPaddingRow = -1;

struct TokenBatch {
  std::int64_t rows = 0;
  std::int64_t seq_len = 0;
  /// rows x (seq_len + 1) token ids, row-major: inputs are a row's first
  /// seq_len tokens, labels its last seq_len.
  std::vector<std::int64_t> tokens;
  /// rows x seq_len: 1 where the row's label (token t + 1) is a prediction
  /// target, from the file's /loss_mask (all 1 without one).
  std::vector<std::uint8_t> target_mask;
  /// Packed rows only (empty for windows), rows x seq_len: each input's
  /// position inside its document piece (RoPE restarts at 0), and the piece
  /// it belongs to (-1: padding); a token attends to earlier tokens of its
  /// own piece only.
  std::vector<std::int64_t> positions;
  std::vector<std::int64_t> segments;
  /// Each row's identity at any world size: the window index (window i =
  /// tokens[i*seq_len, i*seq_len + seq_len + 1)), a packed row's (epoch, row)
  /// code, or with Poisson sampling the document (privacy unit) it holds;
  /// kPaddingRow for a padding row (all-zero target mask).
  std::vector<std::int64_t> sample_ids;

  /// Tokens per row: seq_len + 1.
  std::int64_t row_length() const { return seq_len + 1; }
  /// Labels that are prediction targets.
  std::int64_t target_tokens() const;
  /// Rows [first, first + count) of this batch, every field.
  TokenBatch slice(std::int64_t first, std::int64_t count) const;
};

/// Fills `batch` with the windows `window_ids` of `dataset`.
void read_windows(const TokenDataset& dataset, std::int64_t seq_len,
                  std::vector<std::int64_t> window_ids, TokenBatch& batch);

}  // namespace nss::data
