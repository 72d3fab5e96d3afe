#include "generate/kv_cache.h"

#include <string>

#include <fmt/format.h>
#include <torch/torch.h>

#include "core/error.h"
#include "core/failure.h"

namespace nss::generate {

KvCache::KvCache(int layers, std::int64_t rows, std::int64_t kv_heads, std::int64_t capacity,
                 std::int64_t head_dim, torch::TensorOptions options) {
  NSS_ASSERT(layers > 0 && rows > 0 && capacity > 0, "generate",
             "a KV cache needs layers, rows and slots");
  // Zeros, not empty memory: a row shorter than its neighbours multiplies
  // its unwritten slots by a zero weight, and NaN garbage would survive that.
  try {
    for (int layer = 0; layer < layers; ++layer) {
      keys_.push_back(torch::zeros({rows, kv_heads, capacity, head_dim}, options));
      values_.push_back(torch::zeros({rows, kv_heads, capacity, head_dim}, options));
    }
  } catch (const c10::Error&) {
    if (!classify(std::current_exception()).out_of_memory) throw;
    keys_.clear();
    values_.clear();
    const double bytes = 2.0 * layers * static_cast<double>(rows) * static_cast<double>(kv_heads) *
                         static_cast<double>(capacity) * static_cast<double>(head_dim) *
                         static_cast<double>(c10::elementSize(options.dtype().toScalarType()));
    throw ResourceError(
        "generate",
        fmt::format("the KV cache of {} rows x {} positions ({} layers, {} KV heads of {}) takes "
                    "{:.2f} GiB, more than the {} could allocate",
                    rows, capacity, layers, kv_heads, head_dim, bytes / (1024.0 * 1024 * 1024),
                    options.device().str()),
        "decode fewer rows side by side (nss_generate --batch-size, pipeline.batch_size) or ask "
        "for fewer new tokens (--max-new-tokens, pipeline.max_new_tokens)");
  }
}

void KvCache::write_prompts(int layer, const torch::Tensor& rows, const torch::Tensor& keys,
                            const torch::Tensor& values) {
  const std::int64_t slots = keys.size(2);
  NSS_ASSERT(slots <= capacity(), "generate",
             "KV cache of " + std::to_string(capacity()) + " slots cannot take a prompt of " +
                 std::to_string(slots));
  const auto index = static_cast<std::size_t>(layer);
  keys_.at(index).narrow(2, 0, slots).index_copy_(0, rows, keys);
  values_.at(index).narrow(2, 0, slots).index_copy_(0, rows, values);
}

std::pair<torch::Tensor, torch::Tensor> KvCache::write_step(int layer, const torch::Tensor& slots,
                                                            const torch::Tensor& keys,
                                                            const torch::Tensor& values,
                                                            std::int64_t visible) {
  NSS_ASSERT(visible <= capacity(), "generate", "KV cache read past its capacity");
  const auto index = static_cast<std::size_t>(layer);
  const torch::Tensor k = keys_.at(index), v = values_.at(index);
  const torch::Tensor where = slots.expand({keys.size(0), keys.size(1), 1, keys.size(3)});
  k.scatter_(2, where, keys);
  v.scatter_(2, where, values);
  return {k.narrow(2, 0, visible), v.narrow(2, 0, visible)};
}

std::pair<torch::Tensor, torch::Tensor> KvCache::row(int layer, std::int64_t row,
                                                     std::int64_t length) const {
  const auto index = static_cast<std::size_t>(layer);
  return {keys_.at(index)[row].narrow(1, 0, length), values_.at(index)[row].narrow(1, 0, length)};
}

void KvCache::copy_row(int layer, std::int64_t row, const torch::Tensor& keys,
                       const torch::Tensor& values) {
  const auto index = static_cast<std::size_t>(layer);
  keys_.at(index)[row].narrow(1, 0, keys.size(1)).copy_(keys);
  values_.at(index)[row].narrow(1, 0, values.size(1)).copy_(values);
}

}  // namespace nss::generate
