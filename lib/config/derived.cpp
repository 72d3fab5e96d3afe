#include "config/derived.h"

#include <algorithm>

#include "config/checked_product.h"

namespace nss::config {

ComputeDtype resolved_dtype(ComputeDtype requested, DeviceKind device) {
  if (requested != ComputeDtype::kAuto) return requested;
  return device == DeviceKind::kCuda ? ComputeDtype::kBf16 : ComputeDtype::kFp32;
}

ComputeDtype resolved_dtype(const TrainingConfig& training, DeviceKind device) {
  return resolved_dtype(training.dtype, device);
}

DType element_type(ComputeDtype resolved) {
  return resolved == ComputeDtype::kBf16 ? DType::kBFloat16 : DType::kFloat32;
}

int data_parallel_ranks(const Config& config, int world_size) {
  const auto tensor =
      static_cast<int>(std::max<std::int64_t>(1, config.parallel.tensor_parallel_size));
  return std::max(1, world_size / tensor);
}

std::string data_parallel_ranks_text(const Config& config, int world_size) {
  const std::int64_t tensor = config.parallel.tensor_parallel_size;
  if (tensor <= 1) return std::to_string(world_size) + " ranks";
  return std::to_string(data_parallel_ranks(config, world_size)) + " data-parallel ranks (" +
         std::to_string(world_size) + " ranks / tensor_parallel_size " + std::to_string(tensor) +
         ")";
}

int data_parallel_rank(const Config& config, int rank) {
  return rank / static_cast<int>(std::max<std::int64_t>(1, config.parallel.tensor_parallel_size));
}

std::int64_t accumulation_steps(const Config& config, int world_size,
                                std::int64_t micro_batch_size) {
  world_size = data_parallel_ranks(config, world_size);
  // A product beyond int64 exceeds the global batch too: one micro-step.
  const auto per_micro_step = checked_mul(micro_batch_size, std::max(1, world_size));
  if (!per_micro_step) return 1;
  return std::max<std::int64_t>(1, config.training.global_batch_size / *per_micro_step);
}

bool poisson_batches(const Config& config) {
  return config.privacy.enabled && config.privacy.sampling == PrivacySampling::kPoisson;
}

int shard_group_ranks(const ParallelConfig& parallel, int world_size) {
  if (parallel.shard_group_size > 0) return static_cast<int>(parallel.shard_group_size);
  return std::max(
      1, world_size / static_cast<int>(std::max<std::int64_t>(1, parallel.tensor_parallel_size)));
}

bool recomputes(const Config& config) {
  return config.training.activation_checkpointing != Recompute::kNone;
}

bool reshard_after_forward(const Config& config) {
  switch (config.parallel.reshard_after_forward) {
    case ReshardPolicy::kTrue:
      return true;
    case ReshardPolicy::kFalse:
      return false;
    case ReshardPolicy::kAuto:
      break;
  }
  return recomputes(config);
}

std::int64_t accumulation_steps(const Config& config, int world_size) {
  return accumulation_steps(config, world_size, config.training.micro_batch_size);
}

std::vector<std::int64_t> divisors(std::int64_t n) {
  // Divisors come in pairs (m, n / m) around the square root.
  std::vector<std::int64_t> lower, upper;
  for (std::int64_t m = 1; m <= n / m; ++m) {
    if (n % m != 0) continue;
    lower.push_back(m);
    if (m != n / m) upper.push_back(n / m);
  }
  lower.insert(lower.end(), upper.rbegin(), upper.rend());
  return lower;
}

std::vector<std::int64_t> micro_batch_choices(const Config& config, int world_size) {
  std::vector<std::int64_t> choices;
  if (world_size < 1) return choices;
  world_size = data_parallel_ranks(config, world_size);
  if (poisson_batches(config)) {
    // Any size runs a Poisson batch (the micro-steps follow it): the powers
    // of two up to the expected share, and the share itself.
    const std::int64_t share = (config.training.global_batch_size + world_size - 1) / world_size;
    for (std::int64_t m = 1; m < share; m *= 2) choices.push_back(m);
    choices.push_back(share);
    return choices;
  }
  if (config.training.global_batch_size % world_size != 0) return choices;
  return divisors(config.training.global_batch_size / world_size);
}

}  // namespace nss::config
