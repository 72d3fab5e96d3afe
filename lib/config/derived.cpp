#include "config/derived.h"

#include <algorithm>

namespace nss::config {

ComputeDtype resolved_dtype(const TrainingConfig& training, DeviceKind device) {
  if (training.dtype != ComputeDtype::kAuto) return training.dtype;
  return device == DeviceKind::kCuda ? ComputeDtype::kBf16 : ComputeDtype::kFp32;
}

DType element_type(ComputeDtype resolved) {
  return resolved == ComputeDtype::kBf16 ? DType::kBFloat16 : DType::kFloat32;
}

std::int64_t accumulation_steps(const Config& config, int world_size,
                                std::int64_t micro_batch_size) {
  return std::max<std::int64_t>(
      1, config.training.global_batch_size / (micro_batch_size * std::max(1, world_size)));
}

std::int64_t accumulation_steps(const Config& config, int world_size) {
  return accumulation_steps(config, world_size, config.training.micro_batch_size);
}

std::vector<std::int64_t> micro_batch_choices(const Config& config, int world_size) {
  std::vector<std::int64_t> choices;
  if (world_size < 1 || config.training.global_batch_size % world_size != 0) return choices;
  const std::int64_t per_rank = config.training.global_batch_size / world_size;
  for (std::int64_t m = 1; m <= per_rank; ++m)
    if (per_rank % m == 0) choices.push_back(m);
  return choices;
}

}  // namespace nss::config
