#include "generate/kv_cache.h"

#include <string>

#include <torch/torch.h>

#include "core/error.h"

namespace nss::generate {

KvCache::KvCache(int layers, std::int64_t batch, std::int64_t kv_heads, std::int64_t capacity,
                 std::int64_t head_dim, torch::TensorOptions options) {
  NSS_ASSERT(layers > 0 && capacity > 0, "generate", "a KV cache needs layers and slots");
  for (int layer = 0; layer < layers; ++layer) {
    keys_.push_back(torch::empty({batch, kv_heads, capacity, head_dim}, options));
    values_.push_back(torch::empty({batch, kv_heads, capacity, head_dim}, options));
  }
}

std::pair<torch::Tensor, torch::Tensor> KvCache::append(int layer, const torch::Tensor& keys,
                                                        const torch::Tensor& values) {
  const std::int64_t slots = keys.size(2);
  NSS_ASSERT(length_ + slots <= capacity(), "generate",
             "KV cache of " + std::to_string(capacity()) + " slots cannot take " +
                 std::to_string(slots) + " more after " + std::to_string(length_));
  const auto k = keys_.at(static_cast<std::size_t>(layer));
  const auto v = values_.at(static_cast<std::size_t>(layer));
  k.narrow(2, length_, slots).copy_(keys);
  v.narrow(2, length_, slots).copy_(values);
  return {k.narrow(2, 0, length_ + slots), v.narrow(2, 0, length_ + slots)};
}

void KvCache::advance(std::int64_t slots) {
  NSS_ASSERT(length_ + slots <= capacity(), "generate", "KV cache advanced past its capacity");
  length_ += slots;
}

}  // namespace nss::generate
