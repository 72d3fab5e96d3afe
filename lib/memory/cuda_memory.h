// Measured memory of a CUDA device as libtorch's CUDA caching allocator counts
// it: the GPU counterpart of memory_counter.h, for the preflight's measured
// peak and metrics.jsonl on GPU. Built against a CUDA libtorch
// (cuda_memory.cpp); CPU-only builds get no_cuda_memory.cpp, whose functions
// throw UsageError.
#pragma once

#include <cstdint>

namespace nss::memory {

/// Bytes of one device, as torch.cuda.memory_stats() reports them ("all" pools).
struct CudaMemoryStats {
  std::int64_t allocated_bytes = 0;       // held by live tensors now
  std::int64_t peak_allocated_bytes = 0;  // highest allocated_bytes since the last reset
  std::int64_t reserved_bytes = 0;        // taken from cudaMalloc and cached (>= allocated)
  std::int64_t peak_reserved_bytes = 0;   // highest reserved_bytes since the last reset
};

/// The whole device as the driver sees it (cudaMemGetInfo): every process and
/// CUDA context on it, cached allocator blocks included.
struct CudaDeviceMemory {
  std::int64_t free_bytes = 0;
  std::int64_t total_bytes = 0;
};

/// True when this build reads the CUDA caching allocator (a CUDA-enabled libtorch).
bool cuda_memory_stats_available();

/// The caching allocator's statistics of CUDA device `device` (an ordinal after
/// CUDA_VISIBLE_DEVICES). Initialises libtorch's CUDA state on first use; throws
/// UsageError when the build has no CUDA libtorch or no such device is visible.
CudaMemoryStats cuda_memory_stats(int device);

/// Free and total bytes of `device` (cudaMemGetInfo; creates the CUDA context
/// there if there is none yet); same errors as cuda_memory_stats().
CudaDeviceMemory cuda_device_memory(int device);

/// Starts new peak measurements on `device` from the current levels (like
/// torch.cuda.reset_peak_memory_stats); same errors as cuda_memory_stats().
void reset_cuda_peak_memory(int device);

/// Caps what the caching allocator may reserve on `device` at `bytes` (0: no
/// cap, the whole device), so that allocations beyond it fail with an
/// out-of-memory error instead of taking memory that belongs to others.
/// Reserved bytes include cached free blocks, so the cap binds at or before
/// `bytes` of live tensors. Same errors as cuda_memory_stats().
void limit_cuda_memory(int device, std::int64_t bytes);

/// Returns the allocator's cached free blocks on `device` to the driver
/// (torch.cuda.empty_cache()); same errors as cuda_memory_stats().
void release_cached_cuda_memory(int device);

}  // namespace nss::memory
