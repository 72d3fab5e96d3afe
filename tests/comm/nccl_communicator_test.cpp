// The NCCL backend as CI can exercise it: the build contains the variant CMake
// detected, and without a usable GPU every rank gets the same clear UsageError
// instead of a hang or a CUDA error code. On a GPU node (one device per rank,
// picked by local rank) the collectives run on device buffers and are checked
// against the MPI results.
#include "comm/nccl_communicator.h"

#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <mpi.h>

#include "comm/mpi_communicator.h"
#include "core/error.h"

#if NSS_HAVE_NCCL
#include <cuda_runtime_api.h>
#endif

namespace nss::comm {
namespace {

TEST(NcclCommunicator, BuildHasTheVariantCMakeDetected) {
  EXPECT_EQ(nccl_available(), NSS_HAVE_NCCL == 1);
}

#if NSS_HAVE_NCCL
int visible_devices() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return count;
}

TEST(NcclCommunicator, WithoutADeviceEveryRankGetsAUsageError) {
  if (visible_devices() > 0) GTEST_SKIP() << "a CUDA device is visible";
  try {
    make_nccl_communicator(MPI_COMM_WORLD, 0, nullptr);
    FAIL() << "expected UsageError";
  } catch (const UsageError& e) {
    EXPECT_NE(e.message().find("needs a CUDA device"), std::string::npos) << e.message();
    EXPECT_NE(e.hint().find("parallel.backend: mpi"), std::string::npos) << e.hint();
  }
}

// One GPU per rank or the test skips (on every rank alike: NCCL refuses two
// ranks on one device).
class NcclOnDevices : public ::testing::Test {
 protected:
  void SetUp() override {
    const int devices = visible_devices();
    if (devices == 0) GTEST_SKIP() << "no CUDA device";
    mpi = MpiCommunicator::create(MPI_COMM_WORLD);
    if (mpi->local_size() > devices) GTEST_SKIP() << "fewer CUDA devices than ranks on this node";
    nccl = make_nccl_communicator(MPI_COMM_WORLD, mpi->local_rank() % devices, nullptr);
  }
  std::unique_ptr<Communicator> mpi, nccl;
};

TEST_F(NcclOnDevices, CollectivesOnDeviceBuffersMatchMpi) {
  EXPECT_STREQ(nccl->backend(), "nccl");
  const std::size_t count = 1001;
  const int size = mpi->size();
  std::vector<float> shard(count), expected(count * size), got(count * size);
  for (std::size_t i = 0; i < count; ++i) shard[i] = static_cast<float>(mpi->rank() * 10000 + i);
  mpi->all_gather(shard.data(), expected.data(), count, DType::kFloat32);

  void *d_shard = nullptr, *d_full = nullptr;
  ASSERT_EQ(cudaMalloc(&d_shard, count * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&d_full, count * size * sizeof(float)), cudaSuccess);
  cudaMemcpy(d_shard, shard.data(), count * sizeof(float), cudaMemcpyHostToDevice);
  nccl->all_gather(d_shard, d_full, count, DType::kFloat32);
  cudaMemcpy(got.data(), d_full, got.size() * sizeof(float), cudaMemcpyDeviceToHost);
  EXPECT_EQ(got, expected);

  // Reduce-scatter of the gathered buffer: each rank's slice times size.
  nccl->reduce_scatter(d_full, d_shard, count, DType::kFloat32);
  std::vector<float> reduced(count);
  cudaMemcpy(reduced.data(), d_shard, count * sizeof(float), cudaMemcpyDeviceToHost);
  for (std::size_t i = 0; i < count; ++i)
    ASSERT_EQ(reduced[i], static_cast<float>(size) * shard[i]) << i;
  nccl->barrier();
  EXPECT_EQ(nccl->stats().by_kind[static_cast<int>(CollectiveKind::kAllGather)].calls, 1);
  cudaFree(d_shard);
  cudaFree(d_full);
}

// Shard collectives return once enqueued: two gathers in flight, each read
// after its wait; finish_all leaves none in flight for the watchdog.
TEST_F(NcclOnDevices, StartedGathersFinishInOrderAndFinishAllSettlesThem) {
  const std::size_t count = 1 << 20;
  const int size = mpi->size();
  std::vector<float> a(count), b(count);
  for (std::size_t i = 0; i < count; ++i) {
    a[i] = static_cast<float>(mpi->rank() + i % 97);
    b[i] = static_cast<float>(-mpi->rank() - i % 89);
  }
  void *d_a = nullptr, *d_b = nullptr, *d_full_a = nullptr, *d_full_b = nullptr;
  ASSERT_EQ(cudaMalloc(&d_a, count * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&d_b, count * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&d_full_a, count * size * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&d_full_b, count * size * sizeof(float)), cudaSuccess);
  cudaMemcpy(d_a, a.data(), count * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(d_b, b.data(), count * sizeof(float), cudaMemcpyHostToDevice);
  const CollectiveTicket first = nccl->start_all_gather(d_a, d_full_a, count, DType::kFloat32);
  const CollectiveTicket second = nccl->start_all_gather(d_b, d_full_b, count, DType::kFloat32);
  EXPECT_EQ(second, first + 1);
  nccl->wait(second);
  nccl->wait(first);
  std::vector<float> got(count * size), expected(count * size);
  cudaMemcpy(got.data(), d_full_b, got.size() * sizeof(float), cudaMemcpyDeviceToHost);
  mpi->all_gather(b.data(), expected.data(), count, DType::kFloat32);
  EXPECT_EQ(got, expected);
  cudaMemcpy(got.data(), d_full_a, got.size() * sizeof(float), cudaMemcpyDeviceToHost);
  mpi->all_gather(a.data(), expected.data(), count, DType::kFloat32);
  EXPECT_EQ(got, expected);
  nccl->finish_all();
  const auto snapshot = nccl->tracker().snapshot();
  EXPECT_FALSE(snapshot.in_flight);
  EXPECT_EQ(snapshot.finished, second);
  for (void* p : {d_a, d_b, d_full_a, d_full_b}) cudaFree(p);
}

// Hybrid sharding's gradient all-reduce returns once enqueued; a copy on the
// legacy default stream (the compute stream here) reads the sum, and
// finish_all settles it for the watchdog.
TEST_F(NcclOnDevices, AllReduceForComputeIsOrderedBeforeLaterCompute) {
  const std::size_t count = 1 << 20;
  std::vector<float> mine(count), sum(count);
  for (std::size_t i = 0; i < count; ++i) mine[i] = static_cast<float>(mpi->rank() + i % 31);
  void* d = nullptr;
  ASSERT_EQ(cudaMalloc(&d, count * sizeof(float)), cudaSuccess);
  cudaMemcpy(d, mine.data(), count * sizeof(float), cudaMemcpyHostToDevice);
  nccl->all_reduce_for_compute(d, count, DType::kFloat32);
  std::vector<float> got(count);
  cudaMemcpy(got.data(), d, count * sizeof(float), cudaMemcpyDeviceToHost);
  sum = mine;
  mpi->all_reduce(sum.data(), count, DType::kFloat32, ReduceOp::kSum);
  EXPECT_EQ(got, sum);
  nccl->finish_all();
  EXPECT_FALSE(nccl->tracker().snapshot().in_flight);
  EXPECT_EQ(nccl->stats().by_kind[static_cast<int>(CollectiveKind::kAllReduce)].calls, 1);
  cudaFree(d);
}
#else
TEST(NcclCommunicator, WithoutNcclTheFactorySaysHowToGetIt) {
  try {
    make_nccl_communicator(MPI_COMM_WORLD, 0, nullptr);
    FAIL() << "expected UsageError";
  } catch (const UsageError& e) {
    EXPECT_NE(e.message().find("no NCCL support"), std::string::npos) << e.message();
  }
}
#endif

}  // namespace
}  // namespace nss::comm
