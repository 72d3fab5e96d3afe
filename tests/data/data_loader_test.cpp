// The dataloader: worker threads deliver exactly the plan's micro-batches, in
// order, whatever the worker count and timing; errors reach the consumer;
// the evaluation reader reads windows in order.
#include "data/data_loader.h"

#include <atomic>
#include <chrono>
#include <set>
#include <stdexcept>
#include <thread>

#include <gtest/gtest.h>

#include "core/error.h"
#include "data/ordered_prefetcher.h"
#include "data/sequential_reader.h"
#include "data/token_file_writer.h"
#include "support/test_paths.h"

namespace nss::data {
namespace {

// A dataset whose token i is i, so every window's content is known.
std::shared_ptr<const TokenDataset> counting_dataset(std::int64_t tokens) {
  const std::string path = nss::testing::scratch_dir("data_loader") + "/count.h5";
  std::vector<std::int64_t> ids(static_cast<std::size_t>(tokens));
  for (std::int64_t i = 0; i < tokens; ++i) ids[i] = i;
  TokenFileWriter writer(path, DType::kInt32, tokens);
  writer.append(ids.data(), tokens);
  writer.commit({});
  return TokenDataset::open(path);
}

DataLoaderOptions options_for(std::int64_t workers, std::int64_t prefetch, std::int64_t rank = 0,
                              std::int64_t world = 1) {
  DataLoaderOptions o;
  o.sampling.seq_len = 8;
  o.sampling.global_batch_size = 16;
  o.sampling.micro_batch_size = 2;
  o.sampling.rank = rank;
  o.sampling.world_size = world;
  o.sampling.seed = 5;
  o.num_workers = workers;
  o.prefetch_factor = prefetch;
  return o;
}

void expect_window_content(const TokenBatch& batch) {
  ASSERT_EQ(batch.tokens.size(), static_cast<std::size_t>(batch.rows * batch.row_length()));
  for (std::int64_t row = 0; row < batch.rows; ++row)
    for (std::int64_t t = 0; t < batch.row_length(); ++t)
      ASSERT_EQ(batch.tokens[row * batch.row_length() + t],
                batch.sample_ids[row] * batch.seq_len + t);
}

TEST(DataLoader, SameStreamWithZeroOrFourWorkers) {
  const auto dataset = counting_dataset(8 * 40 + 1);  // 40 windows: 2 batches per epoch
  DataLoader inline_loader(dataset, options_for(0, 1));
  DataLoader threaded(dataset, options_for(4, 2));
  for (int i = 0; i < 100; ++i) {
    const MicroBatch a = inline_loader.next();
    const MicroBatch b = threaded.next();
    ASSERT_EQ(a.sample_ids, b.sample_ids) << "micro-batch " << i;
    ASSERT_EQ(a.tokens, b.tokens);
    EXPECT_EQ(a.step, i / 8);
    EXPECT_EQ(a.micro_step, i % 8);
    EXPECT_EQ(b.step, a.step);
    EXPECT_EQ(b.micro_step, a.micro_step);
    expect_window_content(b);
  }
}

TEST(DataLoader, FourWorkersUnderLoadLoseAndDuplicateNothing) {
  const auto dataset = counting_dataset(8 * 1000 + 1);
  DataLoader loader(dataset, options_for(4, 1));
  const SamplePlan& plan = loader.plan();
  LoaderPosition position;
  std::uint64_t jitter = 1;
  for (int step = 0; step < 300; ++step) {
    std::vector<std::int64_t> delivered;
    for (std::int64_t m = 0; m < plan.accumulation_steps(); ++m) {
      const MicroBatch micro = loader.next();
      ASSERT_EQ(micro.step, step);
      ASSERT_EQ(micro.micro_step, m);
      ASSERT_EQ(micro.position, position);
      expect_window_content(micro);
      delivered.insert(delivered.end(), micro.sample_ids.begin(), micro.sample_ids.end());
      // An uneven consumer: the workers run ahead and wait by turns.
      jitter = jitter * 6364136223846793005ULL + 1442695040888963407ULL;
      if ((jitter >> 60) == 0) std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    ASSERT_EQ(delivered, plan.global_batch(position)) << "step " << step;
    ASSERT_EQ(std::set<std::int64_t>(delivered.begin(), delivered.end()).size(), delivered.size());
    position = plan.advance(position, 1);
    EXPECT_EQ(loader.resume_position(), position);
  }
}

TEST(DataLoader, ResumePositionAndRestartAtAnotherWorldSize) {
  const auto dataset = counting_dataset(8 * 40 + 1);
  DataLoader first(dataset, options_for(2, 2, /*rank=*/1, /*world=*/2));  // 4 micro-steps
  EXPECT_EQ(first.resume_position(), (LoaderPosition{0, 0}));
  for (int i = 0; i < 4 * 3 + 2; ++i) first.next();  // three steps and half of the fourth
  EXPECT_EQ(first.resume_position(), (LoaderPosition{1, 16}))
      << "mid-step, a checkpoint resumes at the start of the unfinished step";

  DataLoader reference(dataset, options_for(0, 1));
  for (int i = 0; i < 8 * 3; ++i) reference.next();
  // One rank resuming the position saved by two: it continues with the samples
  // of step 3 (ranks 0..3 of 4 together would see the same).
  DataLoaderOptions resumed = options_for(1, 3);
  resumed.start = first.resume_position();
  resumed.first_step = 3;
  DataLoader second(dataset, resumed);
  for (int i = 0; i < 16; ++i) {
    const MicroBatch a = reference.next();
    const MicroBatch b = second.next();
    ASSERT_EQ(a.sample_ids, b.sample_ids);
    ASSERT_EQ(a.step, b.step);
  }
}

TEST(DataLoader, RejectsBadSettings) {
  const auto dataset = counting_dataset(8 * 16 + 1);
  EXPECT_THROW(DataLoader(dataset, options_for(-1, 1)), UsageError);
  EXPECT_THROW(DataLoader(dataset, options_for(1, 0)), UsageError);
  EXPECT_NO_THROW(DataLoader(dataset, options_for(1, 1)));
  const auto short_dataset = counting_dataset(8 * 15 + 1);
  EXPECT_THROW(DataLoader(short_dataset, options_for(1, 1)), DataError);  // 15 windows < 16
}

TEST(OrderedPrefetcher, DeliversInOrderAndRethrowsAWorkersException) {
  std::atomic<int> produced{0};
  OrderedPrefetcher<std::int64_t> prefetcher(4, 4, [&](std::int64_t index) {
    ++produced;
    if (index == 37) throw std::runtime_error("boom at 37");
    // Later items finish first now and then: order must still hold.
    if (index % 5 == 0) std::this_thread::sleep_for(std::chrono::microseconds(300));
    return index * 10;
  });
  for (std::int64_t i = 0; i < 37; ++i) ASSERT_EQ(prefetcher.next(), i * 10);
  EXPECT_THROW(prefetcher.next(), std::runtime_error);
  EXPECT_THROW(prefetcher.next(), std::runtime_error) << "the stream must not skip the failure";
  EXPECT_EQ(prefetcher.delivered(), 37);
  EXPECT_LE(produced.load(), 37 + 4);  // bounded: workers stop claiming after a failure
}

TEST(OrderedPrefetcher, ShutsDownWhileWorkersWaitForSpace) {
  for (int round = 0; round < 20; ++round) {
    OrderedPrefetcher<std::vector<int>> prefetcher(
        4, 4, [](std::int64_t index) { return std::vector<int>(1000, static_cast<int>(index)); });
    EXPECT_EQ(prefetcher.next()[0], 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

TEST(SequentialBatchReader, ReadsWindowsInOrderSplitAcrossRanks) {
  const auto dataset = counting_dataset(8 * 12 + 1);  // 12 windows
  const SequentialBatchReader single(dataset, 8, 4, 3);
  for (std::int64_t k = 0; k < 3; ++k) {
    const TokenBatch batch = single.batch(k);
    EXPECT_EQ(batch.sample_ids,
              (std::vector<std::int64_t>{4 * k, 4 * k + 1, 4 * k + 2, 4 * k + 3}));
    expect_window_content(batch);
  }
  const SequentialBatchReader rank1(dataset, 8, 4, 3, 1, 2);
  EXPECT_EQ(rank1.rows_per_rank(), 2);
  EXPECT_EQ(rank1.batch(2).sample_ids, (std::vector<std::int64_t>{10, 11}));
  EXPECT_THROW(SequentialBatchReader(dataset, 8, 4, 4), DataError);
  EXPECT_THROW(SequentialBatchReader(dataset, 8, 3, 1, 0, 2), UsageError);
}

}  // namespace
}  // namespace nss::data
