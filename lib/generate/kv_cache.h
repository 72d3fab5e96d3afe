// The keys and values every decoder block has computed for the sequences
// decoded side by side, one row each, so that each decoding step attends
// over them instead of recomputing the prefix. Each row holds its own
// sequence from slot 0 (slot t is position t) and grows on its own: a row
// whose sequence ended takes a new one while the others go on (continuous
// batching). Allocated once for the whole generation: appending never copies
// what is already there.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include <torch/types.h>

namespace nss::generate {

class KvCache {
 public:
  /// Room for `capacity` slots per row in each of `layers` blocks: K and V
  /// tensors [rows, kv_heads, capacity, head_dim] with `options` (the model's
  /// dtype and device).
  KvCache(int layers, std::int64_t rows, std::int64_t kv_heads, std::int64_t capacity,
          std::int64_t head_dim, torch::TensorOptions options);

  /// Stores `keys` and `values` [n, kv_heads, S, head_dim] of `layer` in
  /// slots [0, S) of rows `rows` (int64 [n] on the cache's device).
  void write_prompts(int layer, const torch::Tensor& rows, const torch::Tensor& keys,
                     const torch::Tensor& values);

  /// Stores one key and value per row [rows, kv_heads, 1, head_dim] of
  /// `layer` in slot `slots[r]` of row r (`slots` int64 [rows, 1, 1, 1] on
  /// the cache's device) and returns views of slots [0, visible) of every
  /// row: [rows, kv_heads, visible, head_dim].
  std::pair<torch::Tensor, torch::Tensor> write_step(int layer, const torch::Tensor& slots,
                                                     const torch::Tensor& keys,
                                                     const torch::Tensor& values,
                                                     std::int64_t visible);

  /// Slots [0, length) of `row` in `layer`: K and V [kv_heads, length, head_dim].
  std::pair<torch::Tensor, torch::Tensor> row(int layer, std::int64_t row,
                                              std::int64_t length) const;
  /// Copies `keys` and `values` [kv_heads, S, head_dim] into slots [0, S) of `row`.
  void copy_row(int layer, std::int64_t row, const torch::Tensor& keys,
                const torch::Tensor& values);

  std::int64_t capacity() const { return keys_.front().size(2); }
  std::int64_t rows() const { return keys_.front().size(0); }

 private:
  std::vector<torch::Tensor> keys_, values_;
};

}  // namespace nss::generate
