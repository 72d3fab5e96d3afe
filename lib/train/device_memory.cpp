#include "train/device_memory.h"

#include "core/error.h"
#include "fsdp/cuda_memory.h"
#include "fsdp/memory_counter.h"

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
  if (device.is_cpu()) return {fsdp::tensor_bytes_now(), fsdp::tensor_bytes_peak()};
  const fsdp::CudaMemoryStats stats = fsdp::cuda_memory_stats(cuda_index(device));
  return {stats.allocated_bytes, stats.peak_allocated_bytes};
}

void reset_device_peak_memory(const torch::Device& device) {
  require_supported(device);
  if (device.is_cpu())
    fsdp::reset_peak_tensor_bytes();
  else
    fsdp::reset_cuda_peak_memory(cuda_index(device));
}

}  // namespace nss::train
