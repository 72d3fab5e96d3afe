#include "optim/offload_plan.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/error.h"

namespace nss::optim {
namespace {

using Ranges = std::vector<ElementRange>;

// Every element of every shard in exactly one chunk, in streaming order,
// chunks non-empty and at most N, slots alternating, slot sizes the largest.
void expect_tiling(const std::vector<std::int64_t>& sizes, const OffloadPlan& plan,
                   std::int64_t n) {
  std::vector<std::vector<int>> seen(sizes.size());
  for (std::size_t s = 0; s < sizes.size(); ++s)
    seen[s].assign(static_cast<std::size_t>(sizes[s]), 0);
  std::array<std::int64_t, kOffloadSlots> largest{};
  std::size_t previous_shard = 0;
  std::int64_t next_begin = 0;
  for (std::size_t i = 0; i < plan.chunks.size(); ++i) {
    const OffloadChunk& c = plan.chunks[i];
    ASSERT_LT(c.shard, sizes.size());
    EXPECT_GT(c.count, 0);
    EXPECT_LE(c.count, n);
    EXPECT_EQ(c.slot, static_cast<int>(i % kOffloadSlots));
    if (c.shard != previous_shard) {
      EXPECT_GT(c.shard, previous_shard);
      EXPECT_EQ(next_begin, sizes[previous_shard]) << "shard " << previous_shard << " cut short";
      next_begin = 0;
      previous_shard = c.shard;
    }
    EXPECT_EQ(c.begin, next_begin);
    next_begin = c.begin + c.count;
    for (std::int64_t e = c.begin; e < c.begin + c.count; ++e)
      ++seen[c.shard][static_cast<std::size_t>(e)];
    auto& slot = largest[static_cast<std::size_t>(c.slot)];
    slot = std::max(slot, c.count);
  }
  for (std::size_t s = 0; s < sizes.size(); ++s)
    for (std::size_t e = 0; e < seen[s].size(); ++e)
      ASSERT_EQ(seen[s][e], 1) << "shard " << s << " element " << e;
  EXPECT_EQ(plan.slot_elements, largest);
  EXPECT_EQ(plan.staging_bytes(), (largest[0] + largest[1]) * 12);
  EXPECT_EQ(plan.chunk_elements, n);
}

TEST(OffloadPlan, TilesEveryShardWhetherOrNotTheChunkDividesIt) {
  const std::vector<std::int64_t> sizes = {1000, 0, 37, 513, 1, 0, 64};
  const std::vector<Ranges> none(sizes.size());
  for (const std::int64_t n : {1, 3, 7, 64, 100, 513, 1000, 1 << 20}) {
    SCOPED_TRACE("chunk elements " + std::to_string(n));
    const OffloadPlan plan = plan_offload(sizes, none, n);
    expect_tiling(sizes, plan, n);
    std::size_t expected_chunks = 0;
    for (const std::int64_t size : sizes) expected_chunks += (size + n - 1) / n;
    EXPECT_EQ(plan.chunks.size(), expected_chunks);
  }
}

TEST(OffloadPlan, ChunksAreFullButTheLastOfEachShard) {
  const OffloadPlan plan = plan_offload({10, 4}, {{}, {}}, 4);
  ASSERT_EQ(plan.chunks.size(), 4u);
  const std::vector<std::pair<std::int64_t, std::int64_t>> expected = {
      {0, 4}, {4, 4}, {8, 2}, {0, 4}};  // the second shard starts a fresh chunk
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(plan.chunks[i].begin, expected[i].first) << i;
    EXPECT_EQ(plan.chunks[i].count, expected[i].second) << i;
  }
  EXPECT_EQ(plan.chunks[3].shard, 1u);
  EXPECT_EQ(plan.chunks[3].slot, 1);  // slots alternate across shards
}

TEST(OffloadPlan, EmptyShardsAndOneChunkUseNoSecondSlot) {
  const OffloadPlan none = plan_offload({0, 0}, {{}, {}}, 8);
  EXPECT_TRUE(none.chunks.empty());
  EXPECT_EQ(none.staging_bytes(), 0);
  const OffloadPlan one = plan_offload({0, 5}, {{}, {{1, 3}}}, 8);
  ASSERT_EQ(one.chunks.size(), 1u);
  EXPECT_EQ(one.chunks[0].shard, 1u);
  EXPECT_EQ(one.slot_elements[1], 0);
  EXPECT_EQ(one.staging_bytes(), 5 * 12);
}

TEST(OffloadPlan, DecayRangesAreCutAtChunkBoundariesAndRebased) {
  // [2, 9) straddles the boundaries at 4 and 8; [9, 10) ends the shard;
  // [4, 4) is empty and dropped.
  const OffloadPlan plan = plan_offload({10}, {{{2, 9}, {4, 4}, {9, 10}}}, 4);
  ASSERT_EQ(plan.chunks.size(), 3u);
  EXPECT_EQ(plan.chunks[0].decay_ranges, (Ranges{{2, 4}}));
  EXPECT_EQ(plan.chunks[1].decay_ranges, (Ranges{{0, 4}}));
  EXPECT_EQ(plan.chunks[2].decay_ranges, (Ranges{{0, 1}, {1, 2}}));
}

// Random shards and ranges: each element is decayed by as many chunk ranges
// as shard ranges (overlaps included, as AdamW::step applies them).
TEST(OffloadPlan, DecayCoverageIsExactForRandomRanges) {
  std::mt19937_64 random(7);
  for (int trial = 0; trial < 200; ++trial) {
    const int shards = 1 + static_cast<int>(random() % 4);
    std::vector<std::int64_t> sizes;
    std::vector<Ranges> ranges;
    for (int s = 0; s < shards; ++s) {
      const auto size = static_cast<std::int64_t>(random() % 300);
      sizes.push_back(size);
      Ranges r;
      const int count = static_cast<int>(random() % 5);
      for (int k = 0; k < count && size > 0; ++k) {
        const auto a = static_cast<std::int64_t>(random() % (size + 1));
        const auto b = static_cast<std::int64_t>(random() % (size + 1));
        r.emplace_back(std::min(a, b), std::max(a, b));
      }
      ranges.push_back(r);
    }
    const auto n = static_cast<std::int64_t>(1 + random() % 70);
    const OffloadPlan plan = plan_offload(sizes, ranges, n);
    expect_tiling(sizes, plan, n);
    std::vector<std::vector<int>> want(sizes.size()), got(sizes.size());
    for (std::size_t s = 0; s < sizes.size(); ++s) {
      want[s].assign(static_cast<std::size_t>(sizes[s]), 0);
      got[s].assign(static_cast<std::size_t>(sizes[s]), 0);
      for (const auto& [b, e] : ranges[s])
        for (std::int64_t i = b; i < e; ++i) ++want[s][static_cast<std::size_t>(i)];
    }
    for (const OffloadChunk& c : plan.chunks)
      for (const auto& [b, e] : c.decay_ranges) {
        ASSERT_LE(0, b);
        ASSERT_LT(b, e);
        ASSERT_LE(e, c.count);
        for (std::int64_t i = b; i < e; ++i) ++got[c.shard][static_cast<std::size_t>(c.begin + i)];
      }
    ASSERT_EQ(got, want) << "trial " << trial << ", chunk elements " << n;
  }
}

TEST(OffloadPlan, ChunkElementsFromTheStagingBudget) {
  EXPECT_EQ(offload_chunk_elements(24), 1);
  EXPECT_EQ(offload_chunk_elements(47), 1);
  EXPECT_EQ(offload_chunk_elements(std::int64_t{256} << 20), (std::int64_t{256} << 20) / 24);
  const std::int64_t max = std::numeric_limits<std::int64_t>::max();
  EXPECT_EQ(offload_chunk_elements(max), max / 24);
}

TEST(OffloadPlan, BudgetBelowOneElementIsRefusedWithTheReason) {
  for (const std::int64_t budget : {std::int64_t{23}, std::int64_t{0}, std::int64_t{-1}}) {
    try {
      offload_chunk_elements(budget);
      FAIL() << "a budget of " << budget << " bytes was accepted";
    } catch (const UsageError& e) {
      EXPECT_NE(e.message().find("at least 24 bytes"), std::string::npos) << e.message();
      EXPECT_NE(e.message().find(std::to_string(budget) + " bytes"), std::string::npos);
      EXPECT_FALSE(e.hint().empty());
    }
  }
}

TEST(OffloadPlan, HugeShardsDoNotOverflow) {
  const std::int64_t max = std::numeric_limits<std::int64_t>::max();
  // The largest shard an int64 can count, in chunks of the largest budget.
  const std::int64_t n = offload_chunk_elements(max);
  const OffloadPlan plan = plan_offload({max, std::int64_t{1} << 62}, {{{1, max}}, {}}, n);
  std::int64_t covered = 0;
  for (const OffloadChunk& c : plan.chunks)
    if (c.shard == 0) covered += c.count;
  EXPECT_EQ(covered, max);
  const std::int64_t first_shard_chunks = max / n + (max % n != 0 ? 1 : 0);
  const std::int64_t second = std::int64_t{1} << 62;
  EXPECT_EQ(static_cast<std::int64_t>(plan.chunks.size()),
            first_shard_chunks + second / n + (second % n != 0 ? 1 : 0));
  const OffloadChunk& last = plan.chunks[static_cast<std::size_t>(first_shard_chunks - 1)];
  EXPECT_EQ(last.shard, 0u);
  EXPECT_EQ(last.begin + last.count, max);
  EXPECT_EQ(last.decay_ranges, (Ranges{{0, last.count}}));
  EXPECT_EQ(plan.chunks[0].decay_ranges, (Ranges{{1, n}}));
  EXPECT_GT(plan.staging_bytes(), 0);
  EXPECT_LE(plan.staging_bytes(), max);
}

TEST(OffloadPlan, InconsistentInputIsAnInternalError) {
  EXPECT_THROW(plan_offload({10}, {{{5, 11}}}, 4), InternalError);  // past the end
  EXPECT_THROW(plan_offload({10}, {{{6, 5}}}, 4), InternalError);   // reversed
  EXPECT_THROW(plan_offload({10}, {}, 4), InternalError);           // ranges missing
  EXPECT_THROW(plan_offload({-1}, {{}}, 4), InternalError);
  EXPECT_THROW(plan_offload({10}, {{}}, 0), InternalError);
}

}  // namespace
}  // namespace nss::optim
