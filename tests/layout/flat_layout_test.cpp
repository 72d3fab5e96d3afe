#include "layout/flat_layout.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace nss::layout {
namespace {

std::vector<FlatParam> params() {
  return {{"norm.weight", {5}, true, false},
          {"proj.weight", {3, 4}, true, true},
          {"base.weight", {2, 3}, false, false},
          {"lora_A.weight", {2, 4}, true, true}};
}

TEST(FlatLayout, SlotsPaddingAndShards) {
  const FlatLayout layout(params(), 4);
  EXPECT_EQ(layout.numel(true), 5 + 12 + 8);
  EXPECT_EQ(layout.numel(false), 6);
  EXPECT_EQ(layout.shard_size(true), 7);  // 25 -> 28 padded
  EXPECT_EQ(layout.padded(true), 28);
  EXPECT_EQ(layout.shard_size(false), 2);
  EXPECT_EQ(layout.slot(0).offset, 0);
  EXPECT_EQ(layout.slot(1).offset, 5);
  EXPECT_TRUE(layout.slot(3).trainable);
  EXPECT_EQ(layout.slot(3).offset, 17);
  EXPECT_FALSE(layout.slot(2).trainable);
  EXPECT_EQ(layout.slot(2).offset, 0);
}

TEST(FlatLayout, PiecesCoverEveryElementExactlyOnce) {
  for (int world = 1; world <= 5; ++world) {
    const FlatLayout layout(params(), world);
    for (const bool trainable : {true, false}) {
      std::vector<int> covered(static_cast<std::size_t>(layout.padded(trainable)), 0);
      for (int rank = 0; rank < world; ++rank) {
        for (const auto& piece : layout.shard_pieces(trainable, rank)) {
          EXPECT_EQ(layout.slot(piece.param).trainable, trainable);
          const std::int64_t flat = rank * layout.shard_size(trainable) + piece.shard_offset;
          EXPECT_EQ(flat, layout.slot(piece.param).offset + piece.tensor_offset);
          for (std::int64_t i = 0; i < piece.length; ++i) covered[flat + i]++;
        }
      }
      for (std::int64_t i = 0; i < layout.padded(trainable); ++i)
        EXPECT_EQ(covered[i], i < layout.numel(trainable) ? 1 : 0)
            << "world " << world << " i " << i;
    }
  }
}

TEST(FlatLayout, DecayRangesSkipNormsAndMergeNeighbours) {
  const FlatLayout one(params(), 1);
  // norm (0..5) no decay; proj (5..17) and lora_A (17..25) decay, merged.
  EXPECT_EQ(one.decay_ranges(0), (ElementRanges{{5, 25}}));
  const FlatLayout four(params(), 4);  // shards of 7
  EXPECT_EQ(four.decay_ranges(0), (ElementRanges{{5, 7}}));
  EXPECT_EQ(four.decay_ranges(3), (ElementRanges{{0, 4}}));  // 21..25, then padding
}

// QLoRA's base: quantised parameters start at group boundaries and shards
// are whole groups, so that a rank's quantisation of its shard restarts
// blocks and groups exactly where the whole tensor's does.
TEST(FlatLayout, QuantizedParametersStartAtGroupsAndShardsAreWholeGroups) {
  constexpr std::int64_t G = FlatLayout::kQuantizedGroup;
  std::vector<FlatParam> p = {{"input_layernorm.weight", {64}, false, false},
                              {"q_proj.weight", {100, 300}, false, true, true},  // 30000
                              {"q_proj.lora_A.weight", {4, 300}, true, true},
                              {"k_proj.weight", {64, 64}, false, true, true},  // 4096
                              {"o_proj.weight", {G}, false, true, true}};
  for (int world = 1; world <= 4; ++world) {
    const FlatLayout layout(p, world);
    EXPECT_EQ(layout.numel(false), 64);  // only the norm stays in the compute dtype
    EXPECT_EQ(layout.numel(true), 1200);
    EXPECT_TRUE(layout.slot(1).quantized);
    EXPECT_EQ(layout.slot(1).offset, 0);
    EXPECT_EQ(layout.slot(3).offset, 2 * G);  // 30000 rounds up to two groups
    EXPECT_EQ(layout.slot(4).offset, 3 * G);
    EXPECT_EQ(layout.quantized_numel(), 4 * G);
    EXPECT_EQ(layout.quantized_parameters(), 30000 + 4096 + G);
    EXPECT_EQ(layout.quantized_shard_size() % G, 0);
    EXPECT_GE(layout.quantized_padded(), layout.quantized_numel());
    EXPECT_LT(layout.quantized_padded() - layout.quantized_numel(), world * G);
    std::vector<int> covered(static_cast<std::size_t>(layout.quantized_padded()), 0);
    for (int rank = 0; rank < world; ++rank)
      for (const auto& piece : layout.quantized_pieces(rank)) {
        EXPECT_TRUE(layout.slot(piece.param).quantized);
        const std::int64_t flat = rank * layout.quantized_shard_size() + piece.shard_offset;
        EXPECT_EQ(flat, layout.slot(piece.param).offset + piece.tensor_offset);
        for (std::int64_t i = 0; i < piece.length; ++i) covered[flat + i]++;
      }
    std::int64_t held = 0;
    for (const int c : covered) held += c;
    EXPECT_EQ(held, 30000 + 4096 + G);
    for (const auto& piece : layout.shard_pieces(false, 0))
      EXPECT_FALSE(layout.slot(piece.param).quantized);
  }
  std::vector<FlatParam> trainable_and_quantized = {{"w", {64}, true, true, true}};
  EXPECT_THROW(FlatLayout(trainable_and_quantized, 1), InternalError);
}

}  // namespace
}  // namespace nss::layout
