// Where ranks compute, at 1 and 2 ranks: on a machine without a CUDA device
// (CI) every rank picks the CPU unless the configuration insists on NCCL (and
// refuses optimizer offload there); on a GPU node each rank gets its own device.
#include "train/compute_device.h"

#include <gtest/gtest.h>
#include <mpi.h>
#include <torch/cuda.h>

#include "core/error.h"

namespace nss::train {
namespace {

config::ParallelConfig parallel(const std::string& backend) {
  config::ParallelConfig p;
  p.backend = config::choice_of<config::Backend>(backend).value();
  return p;
}

TEST(ComputeDevice, MpiBackendAlwaysComputesOnCpu) {
  const ComputeDevice d = choose_compute_device(parallel("mpi"), MPI_COMM_WORLD);
  EXPECT_TRUE(d.device.is_cpu());
  EXPECT_EQ(d.ranks_on_device, 1);
}

TEST(ComputeDevice, WithoutCudaAutoIsCpuAndNcclIsAUsageError) {
  if (torch::cuda::is_available()) GTEST_SKIP() << "a CUDA device is visible";
  EXPECT_TRUE(choose_compute_device(parallel("auto"), MPI_COMM_WORLD).device.is_cpu());
  try {
    choose_compute_device(parallel("nccl"), MPI_COMM_WORLD);
    FAIL() << "expected UsageError";
  } catch (const UsageError& e) {
    EXPECT_NE(e.message().find("no rank sees a CUDA device"), std::string::npos) << e.message();
    EXPECT_NE(e.hint().find("parallel.backend: mpi"), std::string::npos) << e.hint();
  }
}

// Offloading the optimizer state to the host is meaningless where the host
// computes: a CPU run refuses it (exit 2) and says how to fix the setting.
TEST(ComputeDevice, CpuRunsRefuseOptimizerOffload) {
  config::ParallelConfig p = parallel("mpi");
  p.offload_optimizer = true;
  try {
    choose_compute_device(p, MPI_COMM_WORLD);
    FAIL() << "expected UsageError";
  } catch (const UsageError& e) {
    EXPECT_NE(e.message().find("parallel.offload_optimizer"), std::string::npos) << e.message();
    EXPECT_NE(e.hint().find("parallel.offload_optimizer: false"), std::string::npos) << e.hint();
  }
}

TEST(ComputeDevice, OnGpuNodesEachRankGetsItsOwnDevice) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  int local_size = 1;
  MPI_Comm local;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local);
  MPI_Comm_size(local, &local_size);
  MPI_Comm_free(&local);
  if (local_size > static_cast<int>(torch::cuda::device_count()))
    GTEST_SKIP() << "fewer CUDA devices than ranks on this node";
  const ComputeDevice d = choose_compute_device(parallel("auto"), MPI_COMM_WORLD);
  EXPECT_TRUE(d.device.is_cuda());
  EXPECT_EQ(d.ranks_on_device, 1);
}

}  // namespace
}  // namespace nss::train
