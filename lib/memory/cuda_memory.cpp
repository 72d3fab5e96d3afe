// Reads c10::cuda::CUDACachingAllocator; compiled only against a CUDA libtorch.
#include "memory/cuda_memory.h"

#include <algorithm>
#include <cstddef>
#include <string>

#include <ATen/Context.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <cuda_runtime_api.h>
#include <torch/version.h>

#include "core/error.h"

namespace nss::memory {
namespace {

// StatType::AGGREGATE (every pool together) is element 0 in every libtorch
// release; the enum itself moved namespace (c10::cuda::CUDACachingAllocator,
// then c10::CachingDeviceAllocator in 2.5), so it is indexed directly.
constexpr std::size_t kAggregate = 0;

// The allocator's per-device state exists only after libtorch's CUDA lazy
// initialisation, which the first CUDA tensor would otherwise trigger.
c10::DeviceIndex checked_device(int device) {
  const int visible = c10::cuda::device_count();
  if (device < 0 || device >= visible)
    throw UsageError("memory",
                     "CUDA device " + std::to_string(device) +
                         " is not visible: this process sees " + std::to_string(visible) +
                         " CUDA device(s)",
                     "check CUDA_VISIBLE_DEVICES and the job's GPU request (e.g. Slurm "
                     "--gpus-per-task), or run on CPU");
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 6)
  at::globalContext().lazyInitDevice(c10::DeviceType::CUDA);
#else
  at::globalContext().lazyInitCUDA();
#endif
  return static_cast<c10::DeviceIndex>(device);
}

}  // namespace

bool cuda_memory_stats_available() {
  return true;
}

CudaMemoryStats cuda_memory_stats(int device) {
  const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(checked_device(device));
  const auto& allocated = stats.allocated_bytes[kAggregate];
  const auto& reserved = stats.reserved_bytes[kAggregate];
  return {allocated.current, allocated.peak, reserved.current, reserved.peak};
}

CudaDeviceMemory cuda_device_memory(int device) {
  const c10::cuda::CUDAGuard guard(checked_device(device));
  std::size_t free_bytes = 0, total_bytes = 0;
  const cudaError_t rc = cudaMemGetInfo(&free_bytes, &total_bytes);
  if (rc != cudaSuccess)
    throw InternalError("memory", std::string("cudaMemGetInfo failed on CUDA device ") +
                                      std::to_string(device) + ": " + cudaGetErrorString(rc));
  return {static_cast<std::int64_t>(free_bytes), static_cast<std::int64_t>(total_bytes)};
}

void reset_cuda_peak_memory(int device) {
  c10::cuda::CUDACachingAllocator::resetPeakStats(checked_device(device));
}

// The allocator takes the cap as a fraction of the device's total memory.
void limit_cuda_memory(int device, std::int64_t bytes) {
  const c10::DeviceIndex index = checked_device(device);
  double fraction = 1.0;
  if (bytes > 0) {
    const auto total = static_cast<double>(cuda_device_memory(device).total_bytes);
    fraction = std::min(1.0, static_cast<double>(bytes) / total);
  }
  c10::cuda::CUDACachingAllocator::setMemoryFraction(fraction, index);
}

void release_cached_cuda_memory(int device) {
  checked_device(device);
  c10::cuda::CUDACachingAllocator::emptyCache();
}

}  // namespace nss::memory
