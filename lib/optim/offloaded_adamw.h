// AdamW for shards whose fp32 master and both moments live in host memory
// (parallel.offload_optimizer): the state streams through the compute device
// in chunks (optim/offload_plan.h), each chunk is updated there with exactly
// AdamW::step's arithmetic (the fused kernel on CUDA), copied back, and the
// updated master is written, cast, into the device's compute-dtype shard.
// On CUDA the copy of chunk k + 1 to the device and of chunk k - 1 back to
// the host run on two copy streams while chunk k updates on the compute
// stream; on the CPU the same steps run in order with plain copies.
#pragma once

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "optim/adamw.h"
#include "optim/offload_plan.h"

namespace nss::optim {

/// One shard of the offloaded step and where each of its tensors lives.
struct OffloadedShard {
  at::Tensor* master;      // fp32, host (pinned for CUDA transfers), contiguous
  at::Tensor* exp_avg;     // fp32, host, contiguous, numel of master
  at::Tensor* exp_avg_sq;  // fp32, host, contiguous, numel of master
  const at::Tensor* grad;  // fp32, compute device; null or undefined: shard skipped
  at::Tensor* compute;     // compute device, fp32 or bf16, contiguous: receives master.to(dtype)
  std::vector<ElementRange> decay_ranges;  // [begin, end) elements, as in AdamWShard
};

class OffloadedAdamW {
 public:
  /// `staging_bytes`: device memory for the two staging slots; a chunk holds
  /// staging_bytes / 24 elements (throws UsageError below one element).
  OffloadedAdamW(AdamWOptions options, std::int64_t staging_bytes);
  ~OffloadedAdamW();
  OffloadedAdamW(const OffloadedAdamW&) = delete;
  OffloadedAdamW& operator=(const OffloadedAdamW&) = delete;

  /// AdamW::step (step number `step`, 1-based; learning rate `lr`) on every
  /// shard with a gradient. On return the host state is final and the
  /// compute-dtype shards are written in the compute stream's order.
  void step(const std::vector<OffloadedShard>& shards, double lr, std::int64_t step);

  /// Elements per chunk.
  std::int64_t chunk_elements() const { return chunk_elements_; }
  /// Device bytes the staging slots hold now (0 before the first step).
  std::int64_t staging_bytes_allocated() const;

  /// `elements` fp32 in host memory for offloaded state: on CUDA pinned with
  /// cudaHostAlloc, exactly 4 x elements bytes (libtorch's pinned allocator
  /// rounds up to a power of two), freed with the tensor; pageable memory
  /// where no CUDA device is available. Throws ResourceError when pinning fails.
  static at::Tensor host_tensor(std::int64_t elements);

  const AdamWOptions& options() const { return options_; }

 private:
  struct Staging;  // device slots, CUDA streams and events (offloaded_adamw.cpp)
  AdamWOptions options_;
  std::int64_t chunk_elements_;
  std::unique_ptr<Staging> staging_;
};

}  // namespace nss::optim
