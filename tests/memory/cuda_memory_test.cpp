#include "memory/cuda_memory.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "core/error.h"

namespace nss::memory {
namespace {

// CMake's detection (NSS_HAVE_CUDA, given to this test only) and the .cpp the
// library was built from must agree.
TEST(CudaMemory, BuildUsesTheVariantCMakeDetected) {
  EXPECT_EQ(cuda_memory_stats_available(), NSS_HAVE_CUDA == 1);
}

TEST(CudaMemory, WithoutCudaLibtorchSaysHowToGetOne) {
  if (cuda_memory_stats_available()) GTEST_SKIP() << "built against a CUDA libtorch";
  try {
    cuda_memory_stats(0);
    FAIL() << "expected UsageError";
  } catch (const UsageError& e) {
    EXPECT_NE(e.message().find("CUDA-enabled libtorch"), std::string::npos) << e.message();
    EXPECT_NE(e.hint().find("build_torch2.sh"), std::string::npos) << e.hint();
  }
  EXPECT_THROW(reset_cuda_peak_memory(0), UsageError);
  EXPECT_THROW(cuda_device_memory(0), UsageError);
}

TEST(CudaMemory, RejectsDevicesThatAreNotVisible) {
  if (!cuda_memory_stats_available()) GTEST_SKIP() << "CPU-only libtorch";
  const int visible = static_cast<int>(torch::cuda::device_count());
  for (const int device : {-1, visible}) {
    try {
      cuda_memory_stats(device);
      FAIL() << "expected UsageError for device " << device;
    } catch (const UsageError& e) {
      EXPECT_NE(e.message().find("CUDA device " + std::to_string(device) + " is not visible"),
                std::string::npos)
          << e.message();
      EXPECT_NE(e.message().find("sees " + std::to_string(visible)), std::string::npos);
    }
    EXPECT_THROW(reset_cuda_peak_memory(device), UsageError);
    EXPECT_THROW(cuda_device_memory(device), UsageError);
  }
}

TEST(CudaMemory, TracksAllocatedReservedAndPeakBytes) {
  if (!cuda_memory_stats_available() || torch::cuda::device_count() == 0)
    GTEST_SKIP() << "no CUDA device";
  constexpr std::int64_t kMiB = 1 << 20;  // a multiple of the allocator's 512-byte rounding
  const CudaMemoryStats base = cuda_memory_stats(0);
  reset_cuda_peak_memory(0);
  {
    auto a = torch::empty({kMiB / 4}, torch::TensorOptions(torch::kFloat32).device(torch::kCUDA));
    auto b = torch::empty({kMiB}, torch::TensorOptions(torch::kUInt8).device(torch::kCUDA));
    const CudaMemoryStats held = cuda_memory_stats(0);
    EXPECT_EQ(held.allocated_bytes - base.allocated_bytes, 2 * kMiB);
    EXPECT_GE(held.reserved_bytes, held.allocated_bytes);
    EXPECT_EQ(held.peak_allocated_bytes, held.allocated_bytes);
  }
  const CudaMemoryStats freed = cuda_memory_stats(0);
  EXPECT_EQ(freed.allocated_bytes, base.allocated_bytes);
  EXPECT_EQ(freed.peak_allocated_bytes - base.allocated_bytes, 2 * kMiB);
  EXPECT_GE(freed.reserved_bytes, 2 * kMiB);  // cached, not returned to the driver
  EXPECT_GE(freed.peak_reserved_bytes, freed.reserved_bytes);
  reset_cuda_peak_memory(0);
  const CudaMemoryStats reset = cuda_memory_stats(0);
  EXPECT_EQ(reset.peak_allocated_bytes, reset.allocated_bytes);
  EXPECT_EQ(reset.peak_reserved_bytes, reset.reserved_bytes);
}

TEST(CudaMemory, DeviceMemoryDropsByWhatTheAllocatorReserves) {
  if (!cuda_memory_stats_available() || torch::cuda::device_count() == 0)
    GTEST_SKIP() << "no CUDA device";
  const CudaDeviceMemory before = cuda_device_memory(0);
  EXPECT_GT(before.total_bytes, 0);
  EXPECT_LE(before.free_bytes, before.total_bytes);
  constexpr std::int64_t kBytes = std::int64_t{256} << 20;
  const CudaMemoryStats stats_before = cuda_memory_stats(0);
  auto held = torch::empty({kBytes}, torch::TensorOptions(torch::kUInt8).device(torch::kCUDA));
  const CudaMemoryStats stats_after = cuda_memory_stats(0);
  const CudaDeviceMemory after = cuda_device_memory(0);
  EXPECT_EQ(after.total_bytes, before.total_bytes);
  EXPECT_EQ(stats_after.allocated_bytes - stats_before.allocated_bytes,
            static_cast<std::int64_t>(held.nbytes()));
  // The driver sees what the allocator newly reserved (other processes on the
  // device can only make the drop larger).
  EXPECT_GE(before.free_bytes - after.free_bytes,
            stats_after.reserved_bytes - stats_before.reserved_bytes);
}

}  // namespace
}  // namespace nss::memory
