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

/// preflight.max_memory_fraction of the capacity (nullopt: capacity unknown).
std::optional<std::uint64_t> memory_budget(const PreflightContext& context);

/// Memory a rank needs besides the tensors of the training step, by
/// component: the fixed overhead (CPU: the context's baseline resident bytes;
/// GPU: kCudaContextBytes and the cuBLAS workspaces) and, on CPU, the
/// dataloader queue and async-checkpoint staging buffers.
std::vector<MemoryComponent> memory_extras(const PreflightContext& context,
                                           std::int64_t micro_batch_size);

/// Sum of memory_extras.
std::uint64_t extras_bytes(const std::vector<MemoryComponent>& extras);

/// Predicted peak at a micro-batch size: the step's tensors plus the extras.
std::uint64_t predicted_total_bytes(const PreflightContext& context, std::int64_t micro_batch_size);

/// "memory.model": the analytic prediction at the configured micro-batch;
/// fills report.memory (device, capacity, budget, prediction, components,
/// phase, fixed overhead). Passes: the budget verdict is memory.budget's.
Check check_memory_model(const PreflightContext& context, PreflightReport& report);

/// What the budget compares at one micro-batch size.
struct MemoryEstimate {
  std::uint64_t predicted = 0;
  std::optional<std::uint64_t> measured;  // measured there, or read off the line
  bool from_line = false;
  bool out_of_memory = false;  // the synthetic step ran out there
};

/// The budget's decision from the predictions and the measurements alone.
struct BudgetDecision {
  std::uint64_t budget = 0;
  MemoryEstimate configured;  // at training.micro_batch_size
  bool fits = false;
  std::optional<std::int64_t> max_micro_batch_size;  // the largest that fits
  MemoryEstimate at_max;                             // the estimate there
  MemoryEstimate at_one;                             // micro-batch 1
};

/// Pure function of the context and report.memory's measurements; nullopt
/// when no budget is known. Where the synthetic step ran, its measurement
/// decides; elsewhere the prediction and the line through the measurements
/// must both fit.
std::optional<BudgetDecision> decide_budget(const PreflightContext& context,
                                            const MemorySummary& memory);

/// What to change when `decision` does not fit: the largest micro-batch that
/// does (with its accumulation steps), or more memory, ranks or a shorter sequence.
std::string budget_remediation(const PreflightContext& context, const BudgetDecision& decision);

/// "memory.budget": go only if decide_budget fits; records
/// report.memory.max_micro_batch_size.
Check check_memory_budget(const PreflightContext& context, PreflightReport& report);

/// memory.pinned_host: with parallel.offload_optimizer on a GPU run, the
/// pinned host state of each node's ranks (12 bytes per shard element)
/// against its usable memory and every rank's RLIMIT_MEMLOCK
/// (check_pinned_memory); nullopt (no check in the report) otherwise.
std::optional<Check> check_pinned_host_memory(const PreflightContext& context);

}  // namespace nss::preflight
