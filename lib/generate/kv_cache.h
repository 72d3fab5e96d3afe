// The keys and values every decoder block has computed for a batch of
// sequences, so that each decoding step attends over them instead of
// recomputing the prefix. Allocated once for the whole generation (prompt
// plus new tokens): appending never copies what is already there.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include <torch/types.h>

namespace nss::generate {

class KvCache {
 public:
  /// Room for `capacity` slots per sequence in each of `layers` blocks: K and
  /// V tensors [batch, kv_heads, capacity, head_dim] with `options` (the
  /// model's dtype and device).
  KvCache(int layers, std::int64_t batch, std::int64_t kv_heads, std::int64_t capacity,
          std::int64_t head_dim, torch::TensorOptions options);

  /// Stores `keys` and `values` [batch, kv_heads, S, head_dim] of `layer` in
  /// the S slots after the filled ones and returns views of every slot
  /// filled so far, these included: [batch, kv_heads, length() + S, head_dim].
  std::pair<torch::Tensor, torch::Tensor> append(int layer, const torch::Tensor& keys,
                                                 const torch::Tensor& values);
  /// Counts `slots` more slots as filled, once every layer has appended them.
  void advance(std::int64_t slots);

  std::int64_t length() const { return length_; }
  std::int64_t capacity() const { return keys_.front().size(2); }
  std::int64_t batch_size() const { return keys_.front().size(0); }

 private:
  std::vector<torch::Tensor> keys_, values_;
  std::int64_t length_ = 0;
};

}  // namespace nss::generate
