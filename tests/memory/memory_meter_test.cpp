#include "memory/memory_meter.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "core/error.h"
#include "memory/cuda_memory.h"

namespace nss::memory {
namespace {

struct Reading {
  std::int64_t bytes = 0;
  std::int64_t peak_bytes = 0;
};

Reading read(const MemoryMeter& meter) {
  return {meter.bytes_now(), meter.peak_bytes()};
}

TEST(MemoryMeter, CpuReadsTheCountingAllocator) {
  const auto meter = make_memory_meter(torch::kCPU);
  meter->reset_peak();
  const Reading before = read(*meter);
  EXPECT_EQ(before.peak_bytes, before.bytes);
  {
    const auto held = torch::empty({1 << 20}, torch::kFloat32);  // 4 MiB
    const Reading during = read(*meter);
    EXPECT_EQ(during.bytes - before.bytes, 4 << 20);
    EXPECT_EQ(during.peak_bytes, during.bytes);
  }
  const Reading after = read(*meter);
  EXPECT_EQ(after.bytes, before.bytes);
  EXPECT_EQ(after.peak_bytes - before.bytes, 4 << 20);
  meter->reset_peak();
  EXPECT_EQ(read(*meter).peak_bytes, after.bytes);
}

TEST(MemoryMeter, CudaReadsTheCachingAllocator) {
  const torch::Device cuda(torch::kCUDA, 0);
  if (!cuda_memory_stats_available()) {
    EXPECT_THROW(read(*make_memory_meter(cuda)), UsageError);
    EXPECT_THROW(make_memory_meter(cuda)->reset_peak(), UsageError);
    return;
  }
  if (torch::cuda::device_count() == 0) GTEST_SKIP() << "no CUDA device";
  const auto meter = make_memory_meter(cuda);
  meter->reset_peak();
  const Reading before = read(*meter);
  {
    const auto held = torch::empty({1 << 20}, torch::TensorOptions(torch::kFloat32).device(cuda));
    EXPECT_EQ(read(*meter).bytes - before.bytes, 4 << 20);
  }
  const Reading after = read(*meter);
  EXPECT_EQ(after.bytes, before.bytes);
  EXPECT_EQ(after.peak_bytes - before.bytes, 4 << 20);
}

}  // namespace
}  // namespace nss::memory
