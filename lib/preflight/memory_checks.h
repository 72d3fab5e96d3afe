// Check groups 6-8, memory (exit 3 on failure): what one rank can use, the
// analytic prediction ("memory.model"), and the budget verdict with the
// largest micro-batch that fits ("memory.budget"). The measured synthetic step
// between them ("memory.synthetic_step") runs the real model, so it lives in
// lib/train and records its measurements in report.memory.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "preflight/check.h"
#include "preflight/context.h"
#include "preflight/report.h"

namespace nss::preflight {

/// The CUDA context and libraries' device memory outside the caching
/// allocator, counted as the fixed overhead of a GPU rank (docs/preflight.md).
constexpr std::uint64_t kCudaContextBytes = std::uint64_t{512} << 20;

/// cuBLAS and cuBLASLt workspaces, which libtorch takes from the caching
/// allocator at a stream's first matrix product and keeps: 32 MiB each on
/// Hopper and later (less on older GPUs; CUBLAS_WORKSPACE_CONFIG changes it).
constexpr std::uint64_t kCublasWorkspaceBytes = std::uint64_t{64} << 20;

/// What one rank can use. CPU: each node's usable host memory / its ranks;
/// GPU: each rank's free device memory at start / the ranks sharing that
/// device; the tightest rank decides.
struct MemoryCapacity {
  std::optional<std::uint64_t> bytes;  // nullopt: unknown on some rank
  std::string description;  // e.g. "host n1: 31.2 GiB usable (bound by MemAvailable) / 4 ranks"
};
MemoryCapacity memory_capacity(const PreflightContext& context);

/// Memory a rank needs besides the tensors of the training step, by
/// component: the fixed overhead (CPU: `baseline_resident_bytes`, the
/// process's resident memory before the model; GPU: kCudaContextBytes) and,
/// on CPU, the dataloader queue and async-checkpoint staging buffers.
std::vector<MemoryComponent> memory_extras(const config::Config& config, int world_size,
                                           DeviceKind device, std::int64_t micro_batch_size,
                                           std::uint64_t baseline_resident_bytes);

/// Sum of memory_extras.
std::uint64_t extras_bytes(const std::vector<MemoryComponent>& extras);

/// Predicted peak at a micro-batch size: the step's tensors plus the extras.
std::uint64_t predicted_total_bytes(const config::Config& config, int world_size, DeviceKind device,
                                    std::int64_t micro_batch_size,
                                    std::uint64_t baseline_resident_bytes);

/// "memory.model": the analytic prediction at the configured micro-batch;
/// fills report.memory (device, capacity, budget, prediction, components,
/// phase, fixed overhead). Passes: the budget verdict is memory.budget's.
Check check_memory_model(const PreflightContext& context, PreflightReport& report,
                         std::uint64_t baseline_resident_bytes);

/// The micro-batch sizes that divide global_batch_size / world_size, ascending.
std::vector<std::int64_t> micro_batch_choices(const config::Config& config, int world_size);

/// "memory.budget": go only if the predicted and the measured peak are within
/// preflight.max_memory_fraction x capacity; names the largest micro-batch
/// that fits (report.memory.max_micro_batch_size) from the line through the
/// measurements and the analytic model.
Check check_memory_budget(const PreflightContext& context, PreflightReport& report,
                          std::uint64_t baseline_resident_bytes);

}  // namespace nss::preflight
