// Facts derived from the configuration at a world size or for a device,
// decided here once: the compute dtype `auto` resolves to, the
// gradient-accumulation steps, the micro-batch sizes a world size allows.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "config/config.h"
#include "core/device_kind.h"
#include "core/dtype.h"

namespace nss::config {

/// A compute dtype with auto resolved: kFp32 on CPU, kBf16 on CUDA (never
/// kAuto); for training.dtype and nss_generate --dtype alike.
ComputeDtype resolved_dtype(ComputeDtype requested, DeviceKind device);

/// training.dtype resolved.
ComputeDtype resolved_dtype(const TrainingConfig& training, DeviceKind device);

/// The element type of a resolved compute dtype: float32 or bfloat16.
DType element_type(ComputeDtype resolved);

/// Ranks that read different batches: world_size / parallel.tensor_parallel_size
/// (the ranks of a tensor group read the same micro-batches), at least 1.
/// The batch arithmetic below counts these.
int data_parallel_ranks(const Config& config, int world_size);
/// "8 ranks", or "2 data-parallel ranks (8 ranks / tensor_parallel_size 4)".
std::string data_parallel_ranks_text(const Config& config, int world_size);
/// Which of them world rank `rank` is: its tensor group (rank / tensor_parallel_size).
int data_parallel_rank(const Config& config, int rank);

/// Micro-batches each rank runs per optimizer step at `micro_batch_size`:
/// global_batch_size / (micro_batch_size x data-parallel ranks), at least 1
/// (the preflight also evaluates micro-batches larger than a rank's share).
std::int64_t accumulation_steps(const Config& config, int world_size,
                                std::int64_t micro_batch_size);

/// The same at training.micro_batch_size.
std::int64_t accumulation_steps(const Config& config, int world_size);

/// True when each step's batch is drawn by Poisson sampling (privacy on with
/// sampling: poisson): its size varies, global_batch_size is its expectation.
bool poisson_batches(const Config& config);

/// Ranks that shard the model together: parallel.shard_group_size, or
/// `world_size` / parallel.tensor_parallel_size when it is 0 (full
/// sharding). validate_layout() checks that it divides that.
int shard_group_ranks(const ParallelConfig& parallel, int world_size);

/// Whether a unit's backward recomputes its forward (training.activation_checkpointing
/// full or selective).
bool recomputes(const Config& config);

/// parallel.reshard_after_forward with auto resolved: true when the backward
/// recomputes, false without.
bool reshard_after_forward(const Config& config);

/// The positive divisors of `n` (>= 1), ascending; sqrt(n) steps however large n.
std::vector<std::int64_t> divisors(std::int64_t n);

/// The micro-batch sizes that divide global_batch_size / data-parallel
/// ranks, ascending; empty when those do not divide the global batch. Under
/// Poisson batches (any size runs): the powers of two below the expected
/// share ceil(global_batch_size / data-parallel ranks), and the share.
std::vector<std::int64_t> micro_batch_choices(const Config& config, int world_size);

}  // namespace nss::config
