// The sampling plan: a deterministic shuffle per (seed, epoch), global batches
// split across ranks and micro-steps, epoch boundaries, resume at any world size.
#include <algorithm>
#include <set>

#include <gtest/gtest.h>

#include "core/error.h"
#include "data/loader_memory.h"
#include "data/sample_permutation.h"
#include "data/sample_plan.h"

namespace nss::data {
namespace {

std::vector<std::uint64_t> order_of(std::uint64_t size, std::uint64_t seed, std::uint64_t epoch) {
  const SamplePermutation permutation(size, seed, epoch);
  std::vector<std::uint64_t> order(size);
  for (std::uint64_t i = 0; i < size; ++i) order[i] = permutation(i);
  return order;
}

TEST(SamplePermutation, IsABijectionForEverySize) {
  for (const std::uint64_t size : {1u, 2u, 3u, 5u, 10u, 64u, 1000u, 4097u, 65537u}) {
    std::vector<std::uint64_t> order = order_of(size, 7, 0);
    std::sort(order.begin(), order.end());
    for (std::uint64_t i = 0; i < size; ++i) ASSERT_EQ(order[i], i) << "size " << size;
  }
}

TEST(SamplePermutation, DeterministicPerSeedAndDifferentPerEpochAndSeed) {
  const auto a = order_of(1000, 1234, 0);
  EXPECT_EQ(a, order_of(1000, 1234, 0));
  EXPECT_NE(a, order_of(1000, 1234, 1));
  EXPECT_NE(a, order_of(1000, 1235, 0));
  EXPECT_NE(order_of(1000, 1234, 1), order_of(1000, 1234, 2));
  // Shuffled, not the identity or a rotation: few fixed points, many descents.
  std::size_t fixed = 0, descents = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    fixed += a[i] == i;
    descents += i > 0 && a[i] < a[i - 1];
  }
  EXPECT_LT(fixed, 20u);
  EXPECT_GT(descents, 400u);
  EXPECT_LT(descents, 600u);
}

SamplingConfig config_for(std::int64_t rank, std::int64_t world, std::int64_t micro = 2) {
  SamplingConfig c;
  c.seq_len = 16;
  c.global_batch_size = 8;
  c.micro_batch_size = micro;
  c.rank = rank;
  c.world_size = world;
  c.seed = 99;
  return c;
}

TEST(SamplePlan, RanksAndMicroStepsCoverEachGlobalBatchExactlyOnce) {
  const std::int64_t windows = 100;
  const SamplePlan reference(windows, config_for(0, 1, 8));
  LoaderPosition position;
  for (int step = 0; step < 30; ++step) {  // crosses several epochs (12 batches each)
    const auto expected = reference.global_batch(position);
    ASSERT_EQ(std::set<std::int64_t>(expected.begin(), expected.end()).size(), 8u);
    for (const std::int64_t world : {1, 2, 4}) {
      for (const std::int64_t micro : {1, 2}) {
        if (8 % (world * micro) != 0) continue;
        std::vector<std::int64_t> gathered;
        for (std::int64_t rank = 0; rank < world; ++rank) {
          const SamplePlan plan(windows, config_for(rank, world, micro));
          EXPECT_EQ(plan.accumulation_steps(), 8 / (world * micro));
          for (std::int64_t m = 0; m < plan.accumulation_steps(); ++m) {
            std::vector<std::int64_t> ids(static_cast<std::size_t>(micro));
            plan.micro_batch(position, m, ids.data());
            gathered.insert(gathered.end(), ids.begin(), ids.end());
          }
        }
        EXPECT_EQ(gathered, expected) << "world " << world << " micro " << micro;
      }
    }
    position = reference.advance(position, 1);
  }
}

TEST(SamplePlan, EpochsSkipTheIncompleteLastBatchAndReshuffle) {
  const SamplePlan plan(10, config_for(0, 1));  // 10 windows, global batch 8
  EXPECT_EQ(plan.batches_per_epoch(0), 1);
  LoaderPosition p;
  std::set<std::vector<std::int64_t>> batches;
  for (int e = 0; e < 5; ++e) {
    EXPECT_EQ(p, (LoaderPosition{e, 0}));
    const auto batch = plan.global_batch(p);
    for (const std::int64_t id : batch) EXPECT_TRUE(id >= 0 && id < 10);
    batches.insert(batch);
    p = plan.advance(p, 1);
  }
  EXPECT_GT(batches.size(), 1u) << "every epoch drew the same batch";

  const SamplePlan wide(100, config_for(0, 1));  // 12 batches per epoch, 4 windows left over
  EXPECT_EQ(wide.advance({0, 0}, 12), (LoaderPosition{1, 0}));
  EXPECT_EQ(wide.advance({0, 88}, 1), (LoaderPosition{1, 0}));
  EXPECT_EQ(wide.normalise({0, 93}), (LoaderPosition{1, 0}));
  EXPECT_EQ(wide.normalise({0, 100}), (LoaderPosition{1, 0}));
  try {  // a cursor beyond the epoch was saved over another (longer) dataset
    wide.normalise({0, 101});
    ADD_FAILURE() << "a cursor beyond the dataset was accepted";
  } catch (const DataError& e) {
    EXPECT_NE(e.message().find("cursor 101) lies beyond the 100 samples"), std::string::npos)
        << e.message();
  }
  EXPECT_EQ(wide.advance({0, 8}, 30), (LoaderPosition{2, 56}));
  LoaderPosition stepped{0, 8};
  for (int i = 0; i < 30; ++i) stepped = wide.advance(stepped, 1);
  EXPECT_EQ(stepped, (LoaderPosition{2, 56}));
}

TEST(SamplePlan, ResumeAtAnotherWorldSizeContinuesWithTheSameSamples) {
  const std::int64_t windows = 100;
  const SamplePlan one(windows, config_for(0, 1, 8));
  std::vector<std::vector<std::int64_t>> uninterrupted;
  LoaderPosition p;
  for (int step = 0; step < 20; ++step, p = one.advance(p, 1))
    uninterrupted.push_back(one.global_batch(p));

  // Two ranks run 7 steps and checkpoint; four ranks resume from that position.
  const SamplePlan two(windows, config_for(0, 2));
  const LoaderPosition saved = two.advance({0, 0}, 7);
  LoaderPosition resumed = saved;
  for (int step = 7; step < 20; ++step, resumed = one.advance(resumed, 1)) {
    std::vector<std::int64_t> gathered;
    for (std::int64_t rank = 0; rank < 4; ++rank) {
      const SamplePlan four(windows, config_for(rank, 4, 1));
      for (std::int64_t m = 0; m < four.accumulation_steps(); ++m) {
        std::int64_t id = 0;
        four.micro_batch(resumed, m, &id);
        gathered.push_back(id);
      }
    }
    EXPECT_EQ(gathered, uninterrupted[static_cast<std::size_t>(step)]) << "step " << step;
  }
}

TEST(SamplePlan, RejectsBadArithmeticAndTooFewWindows) {
  auto c = config_for(0, 2, 3);  // 8 is not a multiple of 3 x 2
  EXPECT_THROW(SamplePlan(100, c), UsageError);
  c = config_for(0, 1);
  c.global_batch_size = 8;
  EXPECT_THROW(SamplePlan(7, c), DataError);
  EXPECT_NO_THROW(SamplePlan(8, c));
  EXPECT_THROW(SamplePlan(100, c).normalise({-1, 0}), DataError);
  c.rank = 1;
  EXPECT_THROW(SamplePlan(100, c), UsageError);
}

TEST(LoaderMemory, FollowsThePreflightFormula) {
  EXPECT_EQ(sample_bytes(128, false), 129 * 8 + 8 + 128);
  EXPECT_EQ(sample_bytes(128, true), 129 * 8 + 8 + 128 + 2 * 128 * 8);
  EXPECT_EQ(queued_micro_batches(4, 2), 8);
  EXPECT_EQ(queued_micro_batches(0, 2), 1);
  // workers x prefetch x micro_batch x sample_bytes x 2
  EXPECT_EQ(loader_host_memory_bytes(4, 2, 16, 2048, false),
            4 * 2 * 16 * (2049 * 8 + 8 + 2048) * 2);
  EXPECT_EQ(loader_host_memory_bytes(0, 2, 16, 2048, true),
            16 * (2049 * 8 + 8 + 2048 + 2 * 2048 * 8) * 2);
}

}  // namespace
}  // namespace nss::data
