// The sharded training state's layout: its checkpoint names, the pieces each
// rank's buffers hold (every element of every state tensor exactly once over
// the ranks), and the bytes the memory model counts.
#include "fsdp/sharded_state_layout.h"

#include <map>

#include <gtest/gtest.h>

namespace nss::fsdp {
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
}  // namespace nss::fsdp
