// MpiCommunicator against hand-computed results at 1, 2 and 4 ranks, for every
// dtype and for sizes that are not multiples of anything convenient.
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "comm/agreement.h"
#include "comm/mpi_communicator.h"
#include "comm/shard_groups.h"
#include "core/half.h"

namespace nss::comm {
namespace {

std::unique_ptr<MpiCommunicator> world() {
  return MpiCommunicator::create(MPI_COMM_WORLD);
}

// Stores/loads a small integer-valued double in any dtype (exact for all of them).
void store(DType dtype, void* base, std::size_t i, double value) {
  char* p = static_cast<char*>(base) + i * dtype_size(dtype);
  switch (dtype) {
    case DType::kFloat32: {
      float v = static_cast<float>(value);
      std::memcpy(p, &v, 4);
      break;
    }
    case DType::kFloat64:
      std::memcpy(p, &value, 8);
      break;
    case DType::kBFloat16: {
      auto v = float_to_bf16(static_cast<float>(value));
      std::memcpy(p, &v, 2);
      break;
    }
    case DType::kFloat16: {
      auto v = float_to_f16(static_cast<float>(value));
      std::memcpy(p, &v, 2);
      break;
    }
    case DType::kInt8: {
      auto v = static_cast<std::int8_t>(value);
      std::memcpy(p, &v, 1);
      break;
    }
    case DType::kUInt8: {
      auto v = static_cast<std::uint8_t>(value);
      std::memcpy(p, &v, 1);
      break;
    }
    case DType::kInt16: {
      auto v = static_cast<std::int16_t>(value);
      std::memcpy(p, &v, 2);
      break;
    }
    case DType::kUInt16: {
      auto v = static_cast<std::uint16_t>(value);
      std::memcpy(p, &v, 2);
      break;
    }
    case DType::kInt32: {
      auto v = static_cast<std::int32_t>(value);
      std::memcpy(p, &v, 4);
      break;
    }
    case DType::kUInt32: {
      auto v = static_cast<std::uint32_t>(value);
      std::memcpy(p, &v, 4);
      break;
    }
    case DType::kInt64: {
      auto v = static_cast<std::int64_t>(value);
      std::memcpy(p, &v, 8);
      break;
    }
    case DType::kUInt64: {
      auto v = static_cast<std::uint64_t>(value);
      std::memcpy(p, &v, 8);
      break;
    }
  }
}

double load(DType dtype, const void* base, std::size_t i) {
  const char* p = static_cast<const char*>(base) + i * dtype_size(dtype);
  switch (dtype) {
    case DType::kFloat32: {
      float v;
      std::memcpy(&v, p, 4);
      return v;
    }
    case DType::kFloat64: {
      double v;
      std::memcpy(&v, p, 8);
      return v;
    }
    case DType::kBFloat16: {
      std::uint16_t v;
      std::memcpy(&v, p, 2);
      return bf16_to_float(v);
    }
    case DType::kFloat16: {
      std::uint16_t v;
      std::memcpy(&v, p, 2);
      return f16_to_float(v);
    }
    case DType::kInt8: {
      std::int8_t v;
      std::memcpy(&v, p, 1);
      return v;
    }
    case DType::kUInt8: {
      std::uint8_t v;
      std::memcpy(&v, p, 1);
      return v;
    }
    case DType::kInt16: {
      std::int16_t v;
      std::memcpy(&v, p, 2);
      return v;
    }
    case DType::kUInt16: {
      std::uint16_t v;
      std::memcpy(&v, p, 2);
      return v;
    }
    case DType::kInt32: {
      std::int32_t v;
      std::memcpy(&v, p, 4);
      return v;
    }
    case DType::kUInt32: {
      std::uint32_t v;
      std::memcpy(&v, p, 4);
      return v;
    }
    case DType::kInt64: {
      std::int64_t v;
      std::memcpy(&v, p, 8);
      return static_cast<double>(v);
    }
    case DType::kUInt64: {
      std::uint64_t v;
      std::memcpy(&v, p, 8);
      return static_cast<double>(v);
    }
  }
  return 0;
}

const DType kAllDTypes[] = {DType::kFloat32, DType::kFloat64, DType::kBFloat16, DType::kFloat16,
                            DType::kInt8,    DType::kUInt8,   DType::kInt16,    DType::kUInt16,
                            DType::kInt32,   DType::kUInt32,  DType::kInt64,    DType::kUInt64};
const std::size_t kCounts[] = {1, 7, 1001};

TEST(MpiCommunicator, AllGatherEveryDType) {
  auto comm = world();
  const int n = comm->size(), r = comm->rank();
  for (DType dtype : kAllDTypes) {
    for (std::size_t count : kCounts) {
      std::vector<char> shard(count * dtype_size(dtype)), full(shard.size() * n);
      for (std::size_t i = 0; i < count; ++i) store(dtype, shard.data(), i, r * 10 + i % 10);
      comm->all_gather(shard.data(), full.data(), count, dtype);
      for (int src = 0; src < n; ++src)
        for (std::size_t i = 0; i < count; ++i)
          ASSERT_EQ(load(dtype, full.data(), src * count + i), src * 10 + i % 10)
              << dtype_name(dtype) << " count " << count;
    }
  }
}

TEST(MpiCommunicator, ReduceScatterSumsEveryDType) {
  auto comm = world();
  const int n = comm->size(), r = comm->rank();
  const double rank_sum = n * (n + 1) / 2.0;  // sum of (r + 1) over ranks
  for (DType dtype : kAllDTypes) {
    for (std::size_t count : kCounts) {
      std::vector<char> full(count * n * dtype_size(dtype)), shard(count * dtype_size(dtype));
      for (std::size_t j = 0; j < count * n; ++j)
        store(dtype, full.data(), j, (r + 1) * (j % 5 + 1));
      comm->reduce_scatter(full.data(), shard.data(), count, dtype);
      for (std::size_t i = 0; i < count; ++i) {
        const std::size_t j = r * count + i;
        ASSERT_EQ(load(dtype, shard.data(), i), rank_sum * (j % 5 + 1))
            << dtype_name(dtype) << " count " << count;
      }
    }
  }
}

TEST(MpiCommunicator, AllReduceSumMaxMinEveryDType) {
  auto comm = world();
  const int n = comm->size(), r = comm->rank();
  for (DType dtype : kAllDTypes) {
    for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kMax, ReduceOp::kMin}) {
      std::vector<char> buffer(7 * dtype_size(dtype));
      for (std::size_t i = 0; i < 7; ++i) store(dtype, buffer.data(), i, r + i);
      comm->all_reduce(buffer.data(), 7, dtype, op);
      for (std::size_t i = 0; i < 7; ++i) {
        const double expected = op == ReduceOp::kSum
                                    ? n * (n - 1) / 2.0 + n * static_cast<double>(i)
                                : op == ReduceOp::kMax ? n - 1 + static_cast<double>(i)
                                                       : static_cast<double>(i);
        ASSERT_EQ(load(dtype, buffer.data(), i), expected) << dtype_name(dtype);
      }
    }
  }
}

// On host memory the compute-ordered all-reduce is a plain sum, finished on return.
TEST(MpiCommunicator, AllReduceForComputeSumsAndFinishes) {
  auto comm = MpiCommunicator::create(MPI_COMM_WORLD);
  std::vector<float> values = {1.0f + comm->rank(), 2.0f};
  comm->all_reduce_for_compute(values.data(), values.size(), DType::kFloat32);
  const float n = static_cast<float>(comm->size());
  EXPECT_EQ(values[0], n + n * (n - 1) / 2);
  EXPECT_EQ(values[1], 2 * n);
  EXPECT_FALSE(comm->tracker().snapshot().in_flight);
  EXPECT_DOUBLE_EQ(comm->stats()[CollectiveKind::kAllReduce].bytes, 2.0 * 8 * (n - 1) / n);
}

TEST(MpiCommunicator, BroadcastFromEveryRoot) {
  auto comm = world();
  for (int root = 0; root < comm->size(); ++root) {
    std::vector<std::int64_t> values(5, comm->rank() == root ? 100 + root : -1);
    comm->broadcast(values.data(), values.size(), root);
    for (auto v : values) ASSERT_EQ(v, 100 + root);
  }
}

TEST(MpiCommunicator, ByteAccountingFollowsBusBandwidthConvention) {
  auto comm = world();
  const int n = comm->size();
  std::vector<float> shard(11), full(11 * n);
  comm->all_gather(shard.data(), full.data(), 11, DType::kFloat32);
  comm->reduce_scatter(full.data(), shard.data(), 11, DType::kFloat32);
  comm->all_reduce(full.data(), full.size(), DType::kFloat32, ReduceOp::kSum);
  comm->broadcast(shard.data(), shard.size(), DType::kFloat32, 0);
  comm->barrier();
  const CommStats stats = comm->stats();
  const double full_bytes = 11.0 * 4 * n;
  EXPECT_EQ(stats[CollectiveKind::kAllGather].bytes, full_bytes * (n - 1) / n);
  EXPECT_EQ(stats[CollectiveKind::kReduceScatter].bytes, full_bytes * (n - 1) / n);
  EXPECT_EQ(stats[CollectiveKind::kAllReduce].bytes, 2 * full_bytes * (n - 1) / n);
  EXPECT_EQ(stats[CollectiveKind::kBroadcast].bytes, n > 1 ? 44.0 : 0.0);
  EXPECT_EQ(stats[CollectiveKind::kBarrier].calls, 1u);
  EXPECT_GT(stats.total_seconds(), 0.0);
  EXPECT_EQ(comm->tracker().snapshot().finished, 5u);
}

TEST(MpiCommunicator, LocalRanksOnOneNode) {
  auto comm = world();
  EXPECT_EQ(comm->local_size(), comm->size());  // ctest runs every rank on this machine
  EXPECT_EQ(comm->local_rank(), comm->rank());
}

TEST(ShardGroups, ShapeNamesConsecutiveGroupsAndTheirReplicas) {
  const ShardGroupShape shape = shard_group_shape(8, 4);
  EXPECT_EQ(shape.replicas(), 2);
  EXPECT_EQ(shape.shard_group(5), 1);
  EXPECT_EQ(shape.shard_rank(5), 1);
  EXPECT_EQ(shape.shard_group_ranks(5), (std::vector<int>{4, 5, 6, 7}));
  EXPECT_EQ(shape.replica_group_ranks(5), (std::vector<int>{1, 5}));
  EXPECT_EQ(shape.shard_group_name(5), "shard group 1 (ranks 4-7)");
  EXPECT_EQ(shape.replica_group_name(5), "replica group of shard rank 1 (ranks 1,5)");
  EXPECT_EQ(shard_group_shape(8, 0).group_size, 8);  // 0: all ranks
  EXPECT_THROW(shard_group_shape(8, 3), InternalError);
  EXPECT_THROW(shard_group_shape(4, 8), InternalError);
}

// With tensor ranks, consecutive ranks form a tensor group and a shard group
// takes one tensor rank of a replica.
TEST(ShardGroups, TensorRanksAreFastest) {
  const ShardGroupShape shape = shard_group_shape(8, 2, 2);
  EXPECT_EQ(shape.replicas(), 2);
  EXPECT_EQ(shape.tensor_rank(5), 1);
  EXPECT_EQ(shape.shard_rank(5), 0);
  EXPECT_EQ(shape.replica(5), 1);
  EXPECT_EQ(shape.shard_group(5), 3);
  EXPECT_EQ(shape.tensor_group_ranks(5), (std::vector<int>{4, 5}));
  EXPECT_EQ(shape.shard_group_ranks(5), (std::vector<int>{5, 7}));
  EXPECT_EQ(shape.replica_group_ranks(5), (std::vector<int>{1, 5}));
  EXPECT_EQ(shape.tensor_group_name(5), "tensor group 2 (ranks 4,5)");
  EXPECT_EQ(shape.shard_group_name(5), "shard group 3 of tensor rank 1 (ranks 5,7)");
  EXPECT_EQ(shape.replica_group_name(5),
            "replica group of shard rank 0, tensor rank 1 (ranks 1,5)");
  EXPECT_EQ(shard_group_shape(8, 0, 2).group_size, 4);  // 0: all ranks of a tensor rank
  EXPECT_EQ(shard_group_shape(8, 0, 8).group_size, 1);
  EXPECT_THROW(shard_group_shape(8, 3, 2), InternalError);
  EXPECT_THROW(shard_group_shape(8, 2, 3), InternalError);
  EXPECT_THROW(shard_group_shape(6, 0, 4), InternalError);
  EXPECT_THROW(shard_group_shape(8, 2, 0), InternalError);
}

// Every rank's groups are what the shape says: sizes, ranks, and collectives
// that stay within them.
std::vector<int> members(Communicator& group, int me) {
  std::int32_t id = me;
  std::vector<std::int32_t> all(static_cast<std::size_t>(group.size()));
  group.all_gather(&id, all.data(), 1, DType::kInt32);
  return std::vector<int>(all.begin(), all.end());
}

// Every rank's groups are what the shape says, for every tensor and shard
// group size the world allows: sizes, ranks, names, and collectives that
// stay within them.
TEST(ShardGroups, SplitGroupsHoldTheRanksTheShapeNames) {
  auto world = MpiCommunicator::create(MPI_COMM_WORLD);
  const int me = world->rank();
  for (int t = 1; t <= world->size(); ++t) {
    if (world->size() % t != 0) continue;
    for (int g = 1; g <= world->size() / t; ++g) {
      if (world->size() / t % g != 0) continue;
      const ShardGroupShape shape = shard_group_shape(world->size(), g, t);
      auto groups = split_shard_groups(MPI_COMM_WORLD, shape);
      EXPECT_EQ(groups.shard->size(), g);
      EXPECT_EQ(groups.shard->rank(), shape.shard_rank(me));
      EXPECT_EQ(groups.replicate->size(), shape.replicas());
      EXPECT_EQ(groups.replicate->rank(), shape.replica(me));
      EXPECT_EQ(groups.shard->group(), shape.shard_group_name(me));
      EXPECT_EQ(groups.replicate->group(), shape.replica_group_name(me));
      EXPECT_EQ(members(*groups.shard, me), shape.shard_group_ranks(me));
      EXPECT_EQ(members(*groups.replicate, me), shape.replica_group_ranks(me));
      if (t == 1) {
        EXPECT_EQ(groups.tensor, nullptr);
        continue;
      }
      ASSERT_NE(groups.tensor, nullptr);
      EXPECT_EQ(groups.tensor->rank(), shape.tensor_rank(me));
      EXPECT_EQ(groups.tensor->group(), shape.tensor_group_name(me));
      EXPECT_EQ(members(*groups.tensor, me), shape.tensor_group_ranks(me));
    }
  }
}

TEST(Agreement, RootFailureReachesEveryRankWithTheSameCode) {
  auto comm = world();
  try {
    run_on_root(*comm, 0, [] { throw DataError("data", "no such file x.h5", "fix data.path"); });
    FAIL() << "no error";
  } catch (const AgreedError& e) {
    EXPECT_EQ(e.code(), ExitCode::kData);
    EXPECT_EQ(e.message(), "no such file x.h5");
    EXPECT_EQ(e.hint(), "fix data.path");
    EXPECT_EQ(e.component(), "data");
  }
  EXPECT_NO_THROW(run_on_root(*comm, 0, [] {}));
}

TEST(Agreement, LowestFailingRankWins) {
  auto comm = world();
  const int n = comm->size();
  try {
    run_on_all(*comm, [&] {
      if (comm->rank() == n - 1) throw ResourceError("memory", "rank " + std::to_string(n - 1));
      if (n > 2 && comm->rank() == 1) throw UsageError("config", "rank 1");
    });
    FAIL() << "no error";
  } catch (const AgreedError& e) {
    if (n > 2) {
      EXPECT_EQ(e.code(), ExitCode::kUsage);
      EXPECT_EQ(e.message(), "rank 1");
    } else {
      EXPECT_EQ(e.code(), ExitCode::kResources);
    }
  }
  EXPECT_NO_THROW(run_on_all(*comm, [] {}));
}

TEST(Agreement, TextCollectives) {
  auto comm = world();
  std::string text = comm->rank() == 0 ? std::string(100000, 'x') + "end" : "";
  broadcast_text(*comm, text, 0);
  EXPECT_EQ(text.size(), 100003u);
  const auto all = all_gather_text(*comm, "rank-" + std::string(comm->rank(), '!'));
  ASSERT_EQ(static_cast<int>(all.size()), comm->size());
  for (int r = 0; r < comm->size(); ++r) EXPECT_EQ(all[r], "rank-" + std::string(r, '!'));
}

}  // namespace
}  // namespace nss::comm
