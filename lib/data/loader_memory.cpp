#include "data/loader_memory.h"

namespace nss::data {

std::int64_t sample_bytes(std::int64_t seq_len, bool packed) {
  constexpr auto kInt64 = static_cast<std::int64_t>(sizeof(std::int64_t));
  return (seq_len + 1) * kInt64 + kInt64 + seq_len + (packed ? 2 * seq_len * kInt64 : 0);
}

std::int64_t queued_micro_batches(std::int64_t num_workers, std::int64_t prefetch_factor) {
  return num_workers > 0 ? num_workers * prefetch_factor : 1;
}

std::int64_t loader_host_memory_bytes(std::int64_t num_workers, std::int64_t prefetch_factor,
                                      std::int64_t micro_batch_size, std::int64_t seq_len,
                                      bool packed) {
  return queued_micro_batches(num_workers, prefetch_factor) * micro_batch_size *
         sample_bytes(seq_len, packed) * 2;
}

}  // namespace nss::data
