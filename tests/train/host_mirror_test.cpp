#include "train/host_mirror.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

namespace nss::train {
namespace {

TEST(HostMirror, CpuTensorsAreTheirOwnMirror) {
  auto a = torch::arange(10, torch::kFloat32);
  auto b = torch::ones({3, 4}, torch::kFloat32);
  HostMirror mirror({a, b});
  EXPECT_FALSE(mirror.has_device_tensors());
  EXPECT_EQ(mirror.pinned_bytes(), 0);
  ASSERT_EQ(mirror.size(), 2u);
  EXPECT_EQ(mirror.host(0).data_ptr(), a.data_ptr());  // no copy: the checkpoint reads a itself
  EXPECT_EQ(mirror.host(1).data_ptr(), b.data_ptr());
  mirror.to_host();
  a.add_(1);  // a CPU "mirror" follows the tensor: the snapshot is the checkpoint's own copy
  EXPECT_EQ(mirror.host(0)[0].item<float>(), 1.0f);
}

TEST(HostMirror, CudaTensorsRoundTripThroughPinnedHostMemory) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device (or a CPU-only libtorch)";
  auto device = torch::arange(1000, torch::TensorOptions(torch::kFloat32).device(torch::kCUDA));
  auto cpu = torch::zeros({5}, torch::kFloat32);
  HostMirror mirror({device, cpu});
  EXPECT_TRUE(mirror.has_device_tensors());
  EXPECT_EQ(mirror.pinned_bytes(), 4000);
  EXPECT_TRUE(mirror.host(0).is_pinned());
  mirror.to_host();
  device.add_(1);  // after to_host() the mirror is a snapshot
  EXPECT_TRUE(torch::equal(mirror.host(0), torch::arange(1000, torch::kFloat32)));
  mirror.host(0).fill_(7);
  mirror.to_device();
  EXPECT_TRUE(torch::equal(device.cpu(), torch::full({1000}, 7.0f)));
}

}  // namespace
}  // namespace nss::train
