// This rank's memory on its compute device, for metrics.jsonl's mem_bytes /
// peak_mem_bytes and the step log: live tensor bytes from the counting CPU
// allocator (memory/memory_counter.h) on CPU, and the CUDA caching allocator's
// allocated bytes (memory/cuda_memory.h) on a CUDA device.
#pragma once

#include <cstdint>

#include <torch/types.h>

namespace nss::train {

struct DeviceMemoryReading {
  std::int64_t bytes = 0;       // held by live tensors now
  std::int64_t peak_bytes = 0;  // highest `bytes` since the last reset
};

/// Current and peak bytes on `device` (CPU or CUDA; a CUDA device needs a
/// CUDA-enabled build, UsageError otherwise).
DeviceMemoryReading device_memory(const torch::Device& device);

/// Starts a new peak on `device` from the current level.
void reset_device_peak_memory(const torch::Device& device);

}  // namespace nss::train
