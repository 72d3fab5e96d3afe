// Poisson sampling in the dataloader (DP-SGD): at every world size the ranks'
// micro-batches hold step s's poisson_batch exactly once, every rank runs the
// same number of micro-steps, empty steps are one padding micro-batch, rows
// hold one truncated document, a resume at another world size continues with
// the same batches, the stream does not depend on the workers, and the
// combinations that would break the guarantee are refused.
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <string>

#include <gtest/gtest.h>

#include "core/error.h"
#include "data/data_loader.h"
#include "data/token_file_writer.h"
#include "privacy/poisson_sampler.h"
#include "support/test_paths.h"

namespace nss::data {
namespace {

constexpr std::int64_t kSeqLen = 12;
constexpr std::int64_t kDocuments = 300;
constexpr std::int64_t kMicro = 3;
const char* const kKeyHex = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";

privacy::PoissonKey test_key() {
  return privacy::SecretKey::from_hex(kKeyHex).poisson_key();
}

std::int64_t length_of(std::int64_t d) {
  return 1 + (d * 5) % 23;  // 1..23 tokens: some shorter, some longer than a row
}

// Document d holds tokens 1000 * (d + 1) + i; its loss mask is 0 on its first
// two tokens (a prompt), 1 after.
std::shared_ptr<const TokenDataset> documents_dataset(bool with_offsets = true) {
  std::int64_t total = 0;
  for (std::int64_t d = 0; d < kDocuments; ++d) total += length_of(d);
  const std::string path = nss::testing::scratch_dir("poisson_loader") + "/docs.h5";
  TokenFileWriter writer(path, DType::kInt32, total, /*with_loss_mask=*/true);
  for (std::int64_t d = 0; d < kDocuments; ++d) {
    std::vector<std::int64_t> tokens;
    std::vector<std::uint8_t> mask;
    for (std::int64_t i = 0; i < length_of(d); ++i) {
      tokens.push_back(1000 * (d + 1) + i);
      mask.push_back(i >= 2 ? 1 : 0);
    }
    writer.append(tokens.data(), length_of(d), mask.data());
    if (with_offsets) writer.end_document();
  }
  writer.commit({});
  return TokenDataset::open(path);
}

DataLoaderOptions poisson_options(double q, std::int64_t rank, std::int64_t world,
                                  std::int64_t done_steps = 0, std::int64_t workers = 0) {
  DataLoaderOptions o;
  o.sampling.seq_len = kSeqLen;
  o.sampling.global_batch_size = static_cast<std::int64_t>(q * kDocuments);
  o.sampling.micro_batch_size = kMicro;
  o.sampling.rank = rank;
  o.sampling.world_size = world;
  o.sampling.seed = 3;
  o.packing = config::Packing::kNone;
  o.num_workers = workers;
  o.start = {0, done_steps};
  o.first_step = done_steps + 1;
  o.poisson = PoissonSampling{test_key(), q};
  return o;
}

// A padding row: no target, no segment, pad tokens (the file has no EOS: 0).
void expect_padding_row(const TokenBatch& batch, std::int64_t r) {
  EXPECT_EQ(batch.sample_ids[r], kPaddingRow);
  for (std::int64_t i = 0; i < kSeqLen; ++i) {
    EXPECT_EQ(batch.target_mask[r * kSeqLen + i], 0);
    EXPECT_EQ(batch.segments[r * kSeqLen + i], -1);
  }
  for (std::int64_t i = 0; i <= kSeqLen; ++i) EXPECT_EQ(batch.tokens[r * (kSeqLen + 1) + i], 0);
}

// Row r holds document sample_ids[r] alone, truncated to seq_len + 1 tokens.
void expect_document_row(const TokenBatch& batch, std::int64_t r) {
  const std::int64_t d = batch.sample_ids[r];
  const std::int64_t kept = std::min(length_of(d), kSeqLen + 1);
  for (std::int64_t i = 0; i <= kSeqLen; ++i)
    ASSERT_EQ(batch.tokens[r * (kSeqLen + 1) + i], i < kept ? 1000 * (d + 1) + i : 0) << d;
  for (std::int64_t i = 0; i < kSeqLen; ++i) {
    // Slot i's label is token i + 1: a target when it exists and is past the prompt.
    const bool target = i + 1 < kept && i + 1 >= 2;
    ASSERT_EQ(batch.target_mask[r * kSeqLen + i], target ? 1 : 0) << d << " slot " << i;
    ASSERT_EQ(batch.segments[r * kSeqLen + i], i < kept ? 0 : -1);
    ASSERT_EQ(batch.positions[r * kSeqLen + i], i < kept ? i : 0);
  }
}

// Pulls one step from every rank's loader: checks the step's shape on each
// rank and returns the documents the ranks' rows hold, all of them.
std::vector<std::int64_t> pull_step(std::vector<std::unique_ptr<DataLoader>>& ranks,
                                    std::int64_t step) {
  std::vector<std::int64_t> units;
  std::int64_t micro_steps = -1;
  for (auto& loader : ranks) {
    MicroBatch micro;
    do {
      micro = loader->next();
      EXPECT_EQ(micro.step, step);
      EXPECT_EQ(micro.rows, kMicro);
      if (micro_steps < 0) micro_steps = micro.micro_steps;
      EXPECT_EQ(micro.micro_steps, micro_steps) << "ranks disagree on the micro-steps";
      EXPECT_EQ(micro.position, (LoaderPosition{0, step - 1}));
      EXPECT_EQ(micro.next_position, (LoaderPosition{0, step}));
      bool padding = false;  // padding rows come last
      for (std::int64_t r = 0; r < micro.rows; ++r) {
        if (micro.sample_ids[r] == kPaddingRow) {
          padding = true;
          expect_padding_row(micro, r);
        } else {
          EXPECT_FALSE(padding);
          expect_document_row(micro, r);
          units.push_back(micro.sample_ids[r]);
        }
      }
    } while (!micro.last_micro_step());
    EXPECT_EQ(loader->resume_position(), (LoaderPosition{0, step}));
  }
  const auto world = static_cast<std::int64_t>(ranks.size());
  const auto size = static_cast<std::int64_t>(units.size());
  const std::int64_t per_rank = (size + world - 1) / world;
  EXPECT_EQ(micro_steps, std::max<std::int64_t>(1, (per_rank + kMicro - 1) / kMicro));
  std::sort(units.begin(), units.end());
  return units;
}

std::vector<std::unique_ptr<DataLoader>> loaders(const std::shared_ptr<const TokenDataset>& data,
                                                 double q, std::int64_t world,
                                                 std::int64_t done_steps = 0) {
  std::vector<std::unique_ptr<DataLoader>> ranks;
  for (std::int64_t r = 0; r < world; ++r)
    ranks.push_back(
        std::make_unique<DataLoader>(data, poisson_options(q, r, world, done_steps, r % 2)));
  return ranks;
}

TEST(PoissonLoader, RanksTogetherHoldTheGlobalBatchOnceAtEveryWorldSize) {
  const auto dataset = documents_dataset();
  const double q = 0.04;  // 12 expected: 1 to 4 micro-steps at 1 to 4 ranks
  for (std::int64_t world = 1; world <= 4; ++world) {
    auto ranks = loaders(dataset, q, world);
    for (std::int64_t step = 1; step <= 25; ++step) {
      const auto expected = privacy::poisson_batch(test_key(), step, kDocuments, q);
      ASSERT_EQ(pull_step(ranks, step), expected) << "world " << world << " step " << step;
      const auto global = ranks[0]->poisson_plan()->global_batch(step);
      EXPECT_EQ(global, expected);
    }
  }
}

TEST(PoissonLoader, RankSharesDifferByAtMostOne) {
  const SamplingConfig shape{kSeqLen, 0, kMicro, 0, 1, 0};
  for (std::int64_t world = 1; world <= 5; ++world)
    for (std::int64_t step = 1; step <= 20; ++step) {
      std::int64_t fewest = std::numeric_limits<std::int64_t>::max(), most = 0, total = 0;
      std::int64_t micro_steps = -1;
      for (std::int64_t r = 0; r < world; ++r) {
        SamplingConfig mine = shape;
        mine.rank = r;
        mine.world_size = world;
        const PoissonPlan plan({test_key(), 0.05}, kDocuments, mine);
        const PoissonStep layout = plan.layout(step);
        const auto held = static_cast<std::int64_t>(layout.units.size());
        fewest = std::min(fewest, held);
        most = std::max(most, held);
        total += held;
        EXPECT_TRUE(micro_steps < 0 || micro_steps == layout.micro_steps);
        micro_steps = layout.micro_steps;
        EXPECT_GE(layout.micro_steps * kMicro, held);
      }
      EXPECT_LE(most - fewest, 1);
      EXPECT_EQ(total, static_cast<std::int64_t>(
                           privacy::poisson_batch(test_key(), step, kDocuments, 0.05).size()));
    }
}

TEST(PoissonLoader, AnEmptyStepIsOnePaddingMicroBatchOnEveryRank) {
  const auto dataset = documents_dataset();
  const double q = 0.002;  // 0.6 expected: about half the steps draw no one
  auto ranks = loaders(dataset, q, 3);
  int empty_steps = 0;
  for (std::int64_t step = 1; step <= 30; ++step) {
    const bool empty = privacy::poisson_batch(test_key(), step, kDocuments, q).empty();
    if (!empty) {
      pull_step(ranks, step);
      continue;
    }
    ++empty_steps;
    for (auto& loader : ranks) {
      const MicroBatch micro = loader->next();
      EXPECT_EQ(micro.step, step);
      EXPECT_EQ(micro.micro_steps, 1);
      EXPECT_EQ(micro.global_samples, 0);
      EXPECT_EQ(micro.target_tokens(), 0);
      for (std::int64_t r = 0; r < micro.rows; ++r) expect_padding_row(micro, r);
    }
  }
  EXPECT_GT(empty_steps, 3);
}

TEST(PoissonLoader, ResumeAtAnotherWorldSizeContinuesWithTheSameBatches) {
  const auto dataset = documents_dataset();
  const double q = 0.05;
  auto before = loaders(dataset, q, 2);
  for (std::int64_t step = 1; step <= 6; ++step) pull_step(before, step);
  // Half-way through step 7 a checkpoint still resumes at step 7.
  MicroBatch first = before[0]->next();
  ASSERT_EQ(first.step, 7);
  EXPECT_EQ(before[0]->resume_position(),
            first.last_micro_step() ? (LoaderPosition{0, 7}) : (LoaderPosition{0, 6}));
  const LoaderPosition saved{0, 6};

  auto uninterrupted = loaders(dataset, q, 1);
  for (std::int64_t step = 1; step <= 6; ++step) pull_step(uninterrupted, step);
  for (std::int64_t world : {1, 3, 4}) {
    auto resumed = loaders(dataset, q, world, saved.cursor);
    for (std::int64_t step = 7; step <= 15; ++step)
      ASSERT_EQ(pull_step(resumed, step), privacy::poisson_batch(test_key(), step, kDocuments, q))
          << "world " << world << " step " << step;
  }
}

TEST(PoissonLoader, TheStreamDoesNotDependOnTheWorkers) {
  const auto dataset = documents_dataset();
  DataLoader inline_loader(dataset, poisson_options(0.05, 1, 2, 4, 0));
  DataLoader threaded(dataset, poisson_options(0.05, 1, 2, 4, 4));
  for (int i = 0; i < 80; ++i) {
    const MicroBatch a = inline_loader.next();
    const MicroBatch b = threaded.next();
    ASSERT_EQ(a.step, b.step);
    ASSERT_EQ(a.micro_step, b.micro_step);
    ASSERT_EQ(a.sample_ids, b.sample_ids);
    ASSERT_EQ(a.tokens, b.tokens);
    ASSERT_EQ(a.target_mask, b.target_mask);
    EXPECT_EQ(inline_loader.resume_position(), threaded.resume_position());
  }
}

template <class E>
std::string error_text(const std::function<void()>& make) {
  try {
    make();
  } catch (const E& e) {
    return std::string(e.what());
  }
  ADD_FAILURE() << "no error of the expected type";
  return {};
}

TEST(PoissonLoader, RefusesWhatWouldBreakTheGuarantee) {
  const auto dataset = documents_dataset();
  const auto with = [&](const std::function<void(DataLoaderOptions&)>& change) {
    return [&dataset, change] {
      DataLoaderOptions o = poisson_options(0.05, 0, 1);
      change(o);
      DataLoader loader(dataset, o);
    };
  };
  EXPECT_NE(error_text<UsageError>(with([](auto& o) {
              o.packing = config::Packing::kDocuments;
            })).find("data.packing: none"),
            std::string::npos);
  EXPECT_NE(error_text<UsageError>(with([](auto& o) {
              o.packing = config::Packing::kWindows;
            })).find("data.packing is windows"),
            std::string::npos);
  EXPECT_NE(error_text<UsageError>(with([](auto& o) {
              o.long_documents = config::LongDocuments::kSplit;
            })).find("data.long_documents: truncate"),
            std::string::npos);
  for (const double q : {0.0, 1.5, -0.1, std::nan("")})
    EXPECT_NE(error_text<UsageError>(with([q](auto& o) { o.poisson->q = q; })).find("(0, 1]"),
              std::string::npos)
        << q;
  // A position that counts samples of a shuffled run, not steps.
  EXPECT_NE(error_text<DataError>(with([](auto& o) {
              o.start = {2, 48};
            })).find("Poisson"),
            std::string::npos);
  EXPECT_NE(error_text<DataError>([] {
              DataLoader loader(documents_dataset(/*with_offsets=*/false),
                                poisson_options(0.05, 0, 1));
            }).find("/document_offsets"),
            std::string::npos);
  DataLoader loader(dataset, poisson_options(0.05, 0, 1));
  EXPECT_THROW(loader.plan(), InternalError);
}

}  // namespace
}  // namespace nss::data
