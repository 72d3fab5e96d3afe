// The compute device's tensor memory behind one interface, whichever allocator
// counts it: the counting CPU allocator (memory_counter.h) or libtorch's CUDA
// caching allocator (cuda_memory.h). metrics.jsonl's mem_bytes /
// peak_mem_bytes and the preflight's synthetic step read it.
#pragma once

#include <cstdint>
#include <memory>

#include <torch/types.h>

namespace nss::memory {

/// Live and peak tensor bytes of one device, and a cap on them.
class MemoryMeter {
 public:
  virtual ~MemoryMeter() = default;
  /// The device measured: the CPU, or one CUDA device with its ordinal.
  virtual torch::Device torch_device() const = 0;
  /// Bytes of live tensors now.
  virtual std::int64_t bytes_now() const = 0;
  /// Highest bytes_now() since the last reset_peak().
  virtual std::int64_t peak_bytes() const = 0;
  /// Starts a new peak from the current level.
  virtual void reset_peak() = 0;
  /// Until clear_limit(), allocations that would take bytes_now() above
  /// `limit_bytes` fail as out of memory instead of reaching the system.
  virtual void set_limit(std::int64_t limit_bytes) = 0;
  virtual void clear_limit() = 0;
  /// Hands the free blocks the allocator keeps for reuse back to the system
  /// (CUDA's caching allocator; the counting CPU allocator keeps none), so
  /// that memory freed here is free for others on the device again.
  virtual void release_cached() = 0;
  /// True where libraries keep workspaces in this memory after their first
  /// use (cuBLAS on CUDA) that the memory model counts as an extra of their
  /// own: the measured peaks leave them out.
  virtual bool counts_workspaces_apart() const { return false; }
};

/// The meter of `device`. CPU: the counting allocator, installed here, so
/// make the meter before the tensors it should count. CUDA: the caching
/// allocator's allocated bytes; the limit caps what it may reserve (allocated
/// plus cached blocks, so fragmentation counts against the budget as it will
/// in the job); cuBLAS workspaces count apart. UsageError when the build has
/// no CUDA libtorch or the device is not visible; InternalError for other
/// device types.
std::unique_ptr<MemoryMeter> make_memory_meter(const torch::Device& device);

}  // namespace nss::memory
