// The storages of a unit's flat buffers at 1, 2 and 4 ranks: each one's
// gather is the whole buffer in the compute dtype and it holds the bytes the
// state accounting counts; the plain master is the autograd leaf, the
// offloaded one lives in host memory behind a compute shard that the gathers
// read, with a zero-stride anchor as the leaf; a written shard changes the
// version that invalidates a prefetched gather.
#include "fsdp/shard_storage.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "comm/mpi_communicator.h"
#include "fsdp/device_shard.h"
#include "fsdp/offloaded_master.h"

namespace nss::fsdp {
namespace {

constexpr torch::Dtype kCompute = torch::kBFloat16;

layout::FlatLayout test_layout(int ranks) {
  return layout::FlatLayout(
      {{"w", {5, 7}, true, true}, {"base", {3, 11}, false, false}, {"b", {9}, true, false}}, ranks);
}

float value_of(const std::string& name, std::int64_t i) {
  return static_cast<float>(0.01 * static_cast<double>(i) + (name == "b" ? 2.0 : 0.0));
}

const ParamFiller kFiller = [](const layout::FlatParam& p, std::int64_t offset, std::int64_t count,
                               float* out) {
  for (std::int64_t i = 0; i < count; ++i) out[i] = value_of(p.name, offset + i);
};

class ShardStorageTest : public ::testing::Test {
 protected:
  // Gathers `storage` and checks every parameter of the `trainable` side in it.
  void expect_gathers_the_buffer(const ShardStorage& storage, bool trainable) {
    const InFlightGather gathered = storage.start_gather(*comm_);
    for (const auto ticket : gathered.tickets) comm_->wait(ticket);
    const torch::Tensor full = storage.unshard(gathered);
    ASSERT_EQ(full.scalar_type(), kCompute);
    ASSERT_EQ(full.numel(), layout_.padded(trainable));
    for (std::size_t i = 0; i < layout_.params().size(); ++i) {
      const layout::FlatParam& p = layout_.params()[i];
      if (layout_.slot(i).trainable != trainable) continue;
      torch::Tensor expected = torch::empty({p.numel()});
      for (std::int64_t e = 0; e < p.numel(); ++e) expected[e] = value_of(p.name, e);
      EXPECT_TRUE(
          torch::equal(full.narrow(0, layout_.slot(i).offset, p.numel()), expected.to(kCompute)))
          << p.name;
    }
  }

  std::unique_ptr<comm::Communicator> comm_ = comm::MpiCommunicator::create(MPI_COMM_WORLD);
  layout::FlatLayout layout_ = test_layout(comm_->size());
};

TEST_F(ShardStorageTest, TheDeviceMasterIsTheLeafAndGathersInTheComputeDtype) {
  DeviceMaster master(layout_, comm_->rank(), kCompute, torch::kCPU);
  master.fill(layout_, kFiller);
  expect_gathers_the_buffer(master, true);
  EXPECT_TRUE(master.gradient_leaf().is_same(master.master()));
  EXPECT_TRUE(master.master().requires_grad());
  EXPECT_EQ(master.master().scalar_type(), torch::kFloat32);
  EXPECT_FALSE(master.compute_shard().defined());
  EXPECT_EQ(master.bytes(), layout_.shard_size(true) * 4);
}

TEST_F(ShardStorageTest, TheOffloadedMasterGathersItsComputeShard) {
  OffloadedMaster master(layout_, comm_->rank(), kCompute, torch::kCPU);
  master.fill(layout_, kFiller);
  expect_gathers_the_buffer(master, true);
  EXPECT_TRUE(master.master().device().is_cpu());
  EXPECT_FALSE(master.master().requires_grad());
  EXPECT_TRUE(master.gradient_leaf().requires_grad());
  EXPECT_EQ(master.gradient_leaf().numel(), layout_.shard_size(true));
  EXPECT_EQ(master.gradient_leaf().stride(0), 0);
  EXPECT_EQ(master.bytes(), layout_.shard_size(true) * 2);
  // A checkpoint load writes the master: the compute shard, and the version, follow.
  const std::int64_t before = master.version();
  {
    torch::NoGradGuard no_grad;
    master.master().add_(1.0f);
  }
  master.master_written();
  EXPECT_NE(master.version(), before);
  EXPECT_TRUE(torch::equal(master.compute_shard(), master.master().to(kCompute)));
}

TEST_F(ShardStorageTest, TheFrozenShardIsKeptInTheComputeDtype) {
  DeviceShard frozen(layout_, comm_->rank(), kCompute, torch::kCPU);
  frozen.fill(layout_, kFiller);
  expect_gathers_the_buffer(frozen, false);
  EXPECT_EQ(frozen.shard().scalar_type(), kCompute);
  EXPECT_EQ(frozen.bytes(), layout_.shard_size(false) * 2);
  const std::int64_t before = frozen.version();
  frozen.shard().zero_();
  EXPECT_NE(frozen.version(), before);
}

}  // namespace
}  // namespace nss::fsdp
