// The sharded training state's layout: its checkpoint names, the pieces each
// rank's buffers hold (every element of every state tensor exactly once over
// the ranks, and over hybrid sharding's replicas), and the bytes the memory
// model counts.
#include "layout/sharded_state_layout.h"

#include <map>

#include <gtest/gtest.h>

namespace nss::layout {
namespace {

std::vector<FlatLayout> units(int world) {
  return {FlatLayout({{"embed.weight", {6, 4}, true, false}}, world),
          FlatLayout({{"norm.weight", {4}, true, false},
                      {"base.weight", {4, 4}, false, false},
                      {"lora_A.weight", {2, 4}, true, true}},
                     world),
          FlatLayout({{"frozen.weight", {3}, false, false}}, world)};
}

TEST(ShardedStateLayout, NamesFollowTheCheckpointFormat) {
  EXPECT_EQ(state_tensor_name(StateTensor::kMaster, "a.weight"), "a.weight");
  EXPECT_EQ(state_tensor_name(StateTensor::kExpAvg, "a.weight"), "optimizer.exp_avg.a.weight");
  EXPECT_EQ(state_tensor_name(StateTensor::kExpAvgSq, "a.weight"), "optimizer.exp_avg_sq.a.weight");
  EXPECT_EQ(state_dataset_name(StateTensor::kMaster, 3), "/model/unit_003");
  EXPECT_EQ(state_dataset_name(StateTensor::kExpAvg, 12), "/optimizer/exp_avg/unit_012");
  EXPECT_EQ(state_dataset_name(StateTensor::kExpAvgSq, 0), "/optimizer/exp_avg_sq/unit_000");
  for (const StateTensor kind : kStateTensors)
    EXPECT_EQ(is_optimizer_state(state_tensor_name(kind, "x")), kind != StateTensor::kMaster);
}

TEST(ShardedStateLayout, TensorsAreEveryTrainableParameterOfEveryKind) {
  const ShardedStateLayout layout(units(2), 0);
  const auto tensors = layout.tensors();
  ASSERT_EQ(tensors.size(), 9u);  // 3 trainable parameters x 3 kinds
  EXPECT_EQ(tensors[0].name, "embed.weight");
  EXPECT_EQ(tensors[3].name, "optimizer.exp_avg.embed.weight");
  EXPECT_EQ(tensors[8].name, "optimizer.exp_avg_sq.lora_A.weight");
  EXPECT_EQ(tensors[2].shape, (std::vector<std::int64_t>{2, 4}));
}

TEST(ShardedStateLayout, BuffersCoverEveryElementOnceAtAnyWorldSize) {
  for (int world = 1; world <= 5; ++world) {
    std::map<std::string, std::vector<int>> covered;
    for (const auto& t : ShardedStateLayout(units(world), 0).tensors()) {
      std::int64_t n = 1;
      for (const auto d : t.shape) n *= d;
      covered[t.name].assign(static_cast<std::size_t>(n), 0);
    }
    for (int rank = 0; rank < world; ++rank) {
      const ShardedStateLayout layout(units(world), rank);
      const auto buffers = layout.buffers();
      EXPECT_EQ(buffers.size(), 6u);  // two training units x 3 kinds; the frozen unit has none
      for (const auto& buffer : buffers) {
        EXPECT_EQ(buffer.count * kStateElementBytes, layout.bytes(buffer.unit, buffer.kind));
        EXPECT_EQ(buffer.dataset, state_dataset_name(buffer.kind, buffer.unit));
        for (const auto& piece : buffer.pieces) {
          EXPECT_LE(piece.buffer_offset + piece.length, buffer.count);
          EXPECT_EQ(is_optimizer_state(piece.tensor), buffer.kind != StateTensor::kMaster);
          for (std::int64_t i = 0; i < piece.length; ++i)
            covered.at(piece.tensor).at(static_cast<std::size_t>(piece.tensor_offset + i))++;
        }
      }
    }
    for (const auto& [name, counts] : covered)
      for (std::size_t i = 0; i < counts.size(); ++i)
        EXPECT_EQ(counts[i], 1) << name << " element " << i << " at world " << world;
  }
}

// Hybrid sharding: R replicas hold each shard of a G-way layout; what they
// write together covers every element exactly once, the same pieces as one
// replica's whole buffers, and each writes a contiguous 1/R of its buffer.
TEST(ShardedStateLayout, ReplicasWriteEveryElementOnce) {
  for (int group = 1; group <= 4; ++group) {
    for (int replicas = 1; replicas <= 5; ++replicas) {
      for (int rank = 0; rank < group; ++rank) {
        const ShardedStateLayout layout(units(group), rank);
        const auto whole = layout.buffers();
        std::vector<std::vector<int>> written(whole.size());
        for (std::size_t b = 0; b < whole.size(); ++b)
          written[b].assign(static_cast<std::size_t>(whole[b].count), 0);
        for (int replica = 0; replica < replicas; ++replica) {
          const auto mine = layout.buffers_written_by(replica, replicas);
          ASSERT_EQ(mine.size(), whole.size());
          for (std::size_t b = 0; b < mine.size(); ++b) {
            EXPECT_EQ(mine[b].count, whole[b].count);
            for (const auto& piece : mine[b].pieces) {
              EXPECT_GE(piece.buffer_offset, whole[b].count * replica / replicas);
              EXPECT_LE(piece.buffer_offset + piece.length,
                        whole[b].count * (replica + 1) / replicas);
              // The same tensor elements as the whole buffer holds there.
              bool inside = false;
              for (const auto& w : whole[b].pieces)
                inside =
                    inside || (w.tensor == piece.tensor && piece.buffer_offset >= w.buffer_offset &&
                               piece.buffer_offset + piece.length <= w.buffer_offset + w.length &&
                               piece.tensor_offset - w.tensor_offset ==
                                   piece.buffer_offset - w.buffer_offset);
              EXPECT_TRUE(inside) << piece.tensor;
              for (std::int64_t i = 0; i < piece.length; ++i)
                written[b][static_cast<std::size_t>(piece.buffer_offset + i)]++;
            }
          }
        }
        for (std::size_t b = 0; b < whole.size(); ++b) {
          std::vector<int> expected(written[b].size(), 0);
          for (const auto& w : whole[b].pieces)
            for (std::int64_t i = 0; i < w.length; ++i)
              expected[static_cast<std::size_t>(w.buffer_offset + i)] = 1;
          EXPECT_EQ(written[b], expected) << "group " << group << " replicas " << replicas;
        }
      }
    }
  }
}

TEST(ShardedStateLayout, BytesAreShardsOfFp32AndFrozenInTheComputeDtype) {
  const ShardedStateLayout layout(units(4), 1);
  // Trainable elements per unit: 24, 4 + 8 = 12, 0 -> shards of 6, 3, 0.
  EXPECT_EQ(layout.bytes(0, StateTensor::kMaster), 6 * 4);
  EXPECT_EQ(layout.bytes(StateTensor::kExpAvg), (6 + 3) * 4);
  EXPECT_EQ(layout.saved_bytes(), 3 * (6 + 3) * 4);
  // Frozen elements per unit: 0, 16, 3 -> shards of 0, 4, 1.
  EXPECT_EQ(layout.frozen_bytes(1, 2), 4 * 2);
  EXPECT_EQ(layout.frozen_bytes(2), (4 + 1) * 2);
}

}  // namespace
}  // namespace nss::layout
