#include "memory/memory_counter.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

namespace nss::memory {
namespace {

TEST(MemoryCounter, CountsLiveAndPeakTensorBytes) {
  install_memory_counter();
  install_memory_counter();  // idempotent
  const std::int64_t base = tensor_bytes_now();
  reset_peak_tensor_bytes();
  {
    auto a = torch::empty({1000}, torch::kFloat32);
    EXPECT_EQ(tensor_bytes_now() - base, 4000);
    {
      auto b = torch::empty({500}, torch::kFloat64);
      EXPECT_EQ(tensor_bytes_now() - base, 8000);
    }
    EXPECT_EQ(tensor_bytes_now() - base, 4000);
    auto view = a.narrow(0, 10, 100);  // views allocate nothing
    EXPECT_EQ(tensor_bytes_now() - base, 4000);
  }
  EXPECT_EQ(tensor_bytes_now(), base);
  EXPECT_EQ(tensor_bytes_peak() - base, 8000);
  reset_peak_tensor_bytes();
  EXPECT_EQ(tensor_bytes_peak(), base);
  EXPECT_GT(resident_bytes(), 1 << 20);
}

}  // namespace
}  // namespace nss::memory
