#include "train/device_memory.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "core/error.h"
#include "memory/cuda_memory.h"
#include "memory/memory_counter.h"

namespace nss::train {
namespace {

TEST(DeviceMemory, CpuReadsTheCountingAllocator) {
  memory::install_memory_counter();
  const torch::Device cpu(torch::kCPU);
  reset_device_peak_memory(cpu);
  const DeviceMemoryReading before = device_memory(cpu);
  EXPECT_EQ(before.peak_bytes, before.bytes);
  {
    const auto held = torch::empty({1 << 20}, torch::kFloat32);  // 4 MiB
    const DeviceMemoryReading during = device_memory(cpu);
    EXPECT_EQ(during.bytes - before.bytes, 4 << 20);
    EXPECT_EQ(during.peak_bytes, during.bytes);
  }
  const DeviceMemoryReading after = device_memory(cpu);
  EXPECT_EQ(after.bytes, before.bytes);
  EXPECT_EQ(after.peak_bytes - before.bytes, 4 << 20);
  reset_device_peak_memory(cpu);
  EXPECT_EQ(device_memory(cpu).peak_bytes, after.bytes);
}

TEST(DeviceMemory, CudaReadsTheCachingAllocator) {
  const torch::Device cuda(torch::kCUDA, 0);
  if (!memory::cuda_memory_stats_available()) {
    EXPECT_THROW(device_memory(cuda), UsageError);
    EXPECT_THROW(reset_device_peak_memory(cuda), UsageError);
    return;
  }
  if (torch::cuda::device_count() == 0) GTEST_SKIP() << "no CUDA device";
  reset_device_peak_memory(cuda);
  const DeviceMemoryReading before = device_memory(cuda);
  {
    const auto held = torch::empty({1 << 20}, torch::TensorOptions(torch::kFloat32).device(cuda));
    EXPECT_EQ(device_memory(cuda).bytes - before.bytes, 4 << 20);
  }
  const DeviceMemoryReading after = device_memory(cuda);
  EXPECT_EQ(after.bytes, before.bytes);
  EXPECT_EQ(after.peak_bytes - before.bytes, 4 << 20);
}

}  // namespace
}  // namespace nss::train
