#include "train/device_memory.h"

#include "core/error.h"
#include "memory/cuda_memory.h"
#include "memory/memory_counter.h"

namespace nss::train {
namespace {

int cuda_index(const torch::Device& device) {
  return device.has_index() ? device.index() : 0;
}

void require_supported(const torch::Device& device) {
  if (!device.is_cpu() && !device.is_cuda())
    throw InternalError("train", "no memory statistics for device " + device.str());
}

}  // namespace

DeviceMemoryReading device_memory(const torch::Device& device) {
  require_supported(device);
  if (device.is_cpu()) return {memory::tensor_bytes_now(), memory::tensor_bytes_peak()};
  const memory::CudaMemoryStats stats = memory::cuda_memory_stats(cuda_index(device));
  return {stats.allocated_bytes, stats.peak_allocated_bytes};
}

void reset_device_peak_memory(const torch::Device& device) {
  require_supported(device);
  if (device.is_cpu())
    memory::reset_peak_tensor_bytes();
  else
    memory::reset_cuda_peak_memory(cuda_index(device));
}

}  // namespace nss::train
