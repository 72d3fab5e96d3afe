// Packed rows of whole documents (data.packing documents/none): the next-fit
// plan is a function of (file, seed, epoch) that places every piece exactly
// once, rows carry each document's tokens with positions restarting at 0 and
// one segment per document, no label crosses into the next document or into
// padding, split documents label every token once, and the sample plan walks
// epochs of different sizes the same way step by step or at once.
#include <algorithm>
#include <map>
#include <set>

#include <gtest/gtest.h>

#include "core/error.h"
#include "data/data_loader.h"
#include "data/packed_source.h"
#include "data/sample_plan.h"
#include "data/sequential_reader.h"
#include "data/token_file_writer.h"
#include "support/test_paths.h"

namespace nss::data {
namespace {

constexpr std::int64_t kSeqLen = 16;

// Document d holds tokens 1000 * (d + 1) + i for i < its length; its loss
// mask is 0 on the first two tokens (a "prompt"), 1 after.
struct Documents {
  std::vector<std::int64_t> lengths;
  std::shared_ptr<const TokenDataset> dataset;
};

Documents make_documents(const std::vector<std::int64_t>& lengths, const std::string& tag) {
  std::int64_t total = 0;
  for (const auto length : lengths) total += length;
  const std::string path = nss::testing::scratch_dir("packing_" + tag) + "/docs.h5";
  TokenFileWriter writer(path, DType::kInt32, total, /*with_loss_mask=*/true);
  for (std::size_t d = 0; d < lengths.size(); ++d) {
    std::vector<std::int64_t> tokens;
    std::vector<std::uint8_t> mask;
    for (std::int64_t i = 0; i < lengths[d]; ++i) {
      tokens.push_back(1000 * static_cast<std::int64_t>(d + 1) + i);
      mask.push_back(i >= 2 ? 1 : 0);
    }
    writer.append(tokens.data(), lengths[d], mask.data());
    writer.end_document();
  }
  writer.commit({});
  return {lengths, TokenDataset::open(path)};
}

std::vector<std::int64_t> varied_lengths(int count) {
  std::vector<std::int64_t> lengths;
  for (int d = 0; d < count; ++d) lengths.push_back(2 + (d * 7) % 15);  // 2..16 tokens
  return lengths;
}

SampleSourceOptions packing(
    config::Packing mode, config::LongDocuments long_documents = config::LongDocuments::kTruncate) {
  return {kSeqLen, mode, long_documents, /*shuffle=*/true, 7};
}

// Reads every row of `epoch` and checks its invariants; returns, per
// document, the token values that were labels (targets or not) in the epoch.
std::map<std::int64_t, std::multiset<std::int64_t>> check_epoch(const PackedSource& source,
                                                                std::int64_t epoch) {
  std::map<std::int64_t, std::multiset<std::int64_t>> labels;
  std::vector<std::int64_t> ids;
  for (std::int64_t r = 0; r < source.samples_in_epoch(epoch); ++r)
    ids.push_back(source.sample_at(epoch, r));
  TokenBatch batch;
  source.read(ids, batch);
  for (std::int64_t r = 0; r < batch.rows; ++r) {
    const std::int64_t* tokens = batch.tokens.data() + r * (kSeqLen + 1);
    std::int64_t piece_start = 0;  // the token value at its piece's first slot
    for (std::int64_t i = 0; i < kSeqLen; ++i) {
      const std::int64_t segment = batch.segments[r * kSeqLen + i];
      const std::int64_t position = batch.positions[r * kSeqLen + i];
      const std::uint8_t target = batch.target_mask[r * kSeqLen + i];
      if (segment < 0) {
        EXPECT_EQ(target, 0) << "padding is never a target";
        continue;
      }
      if (i == 0 || batch.segments[r * kSeqLen + i - 1] != segment) piece_start = tokens[i];
      EXPECT_EQ(position, tokens[i] - piece_start) << "positions restart in every piece";
      // Consecutive values: the same document, and the same piece (a split
      // document's next piece starts again with this piece's last token).
      if (tokens[i + 1] != tokens[i] + 1) {
        EXPECT_EQ(target, 0) << "row " << r << " slot " << i << ": a label across pieces";
        continue;
      }
      EXPECT_EQ(target, tokens[i + 1] % 1000 >= 2 ? 1 : 0) << "the file's loss mask";
      labels[tokens[i] / 1000 - 1].insert(tokens[i + 1]);
    }
  }
  return labels;
}

TEST(PackedSource, NextFitPlacesEveryDocumentOnceWithRestartedPositions) {
  const Documents docs = make_documents(varied_lengths(60), "next_fit");
  const PackedSource source(docs.dataset, packing(config::Packing::kDocuments));
  for (std::int64_t epoch = 0; epoch < 3; ++epoch) {
    const auto labels = check_epoch(source, epoch);
    ASSERT_EQ(labels.size() + 0, 60u - 0) << "every document appears (each has a label)";
    for (const auto& [d, values] : labels)
      EXPECT_EQ(static_cast<std::int64_t>(values.size()), docs.lengths[d] - 1)
          << "document " << d << " labels each of its tokens but the first, once";
  }
  // Whole documents in fewer rows than one per document, more than the token minimum.
  const std::int64_t rows = source.samples_in_epoch(0);
  EXPECT_LT(rows, 60);
  std::int64_t total = 0;
  for (const auto length : docs.lengths) total += length;
  EXPECT_GE(rows, (total + kSeqLen) / (kSeqLen + 1));
  // The plan is a function of (file, seed, epoch): a second source agrees.
  const PackedSource again(docs.dataset, packing(config::Packing::kDocuments));
  TokenBatch a, b;
  source.read({source.sample_at(1, 3)}, a);
  again.read({again.sample_at(1, 3)}, b);
  EXPECT_EQ(a.tokens, b.tokens);
  EXPECT_NE(source.sample_at(0, 3), source.sample_at(1, 3));
}

TEST(PackedSource, NoneHasOneDocumentPerRowPadded) {
  const Documents docs = make_documents(varied_lengths(20), "none");
  const PackedSource source(docs.dataset, packing(config::Packing::kNone));
  EXPECT_EQ(source.samples_in_epoch(0), 20);
  TokenBatch batch;
  source.read({source.sample_at(0, 0), source.sample_at(0, 1)}, batch);
  for (std::int64_t r = 0; r < 2; ++r) {
    const std::int64_t document = batch.tokens[r * (kSeqLen + 1)] / 1000 - 1;
    for (std::int64_t i = 0; i < kSeqLen; ++i)
      EXPECT_EQ(batch.segments[r * kSeqLen + i], i < docs.lengths[document] ? 0 : -1);
  }
  const PackingStats stats = source.stats();
  EXPECT_EQ(stats.rows, 20);
  EXPECT_GT(stats.padding_share, 0.3);
}

TEST(PackedSource, LongDocumentsAreTruncatedOrSplitIntoPieces) {
  // 40 tokens = 1 + 16 + 16 + 7: pieces [0,17), [16,33), [32,40) with split.
  const Documents docs = make_documents({40, 5, 17, 18}, "long");
  const PackedSource truncated(docs.dataset, packing(config::Packing::kNone));
  PackingStats stats = truncated.stats();
  EXPECT_EQ(stats.truncated_documents, 2);
  EXPECT_EQ(stats.truncated_tokens, 40 - 17 + 18 - 17);
  EXPECT_EQ(stats.pieces, 4);

  const PackedSource split(docs.dataset,
                           packing(config::Packing::kDocuments, config::LongDocuments::kSplit));
  stats = split.stats();
  EXPECT_EQ(stats.split_documents, 2);
  EXPECT_EQ(stats.pieces, 3 + 1 + 1 + 2);
  const auto labels = check_epoch(split, 0);
  for (std::size_t d = 0; d < docs.lengths.size(); ++d) {
    std::multiset<std::int64_t> expected;
    for (std::int64_t i = 1; i < docs.lengths[d]; ++i)
      expected.insert(1000 * static_cast<std::int64_t>(d + 1) + i);
    EXPECT_EQ(labels.at(static_cast<std::int64_t>(d)), expected)
        << "document " << d << ": each token but the first is a label exactly once";
  }
}

// The memory model's input: epoch 0's row whose documents cost most
// attention (sum of squared lengths), without its padding.
TEST(PackedSource, CostliestRowSpansAreItsDocuments) {
  const Documents docs = make_documents({5, 17, 3, 9, 8, 16}, "costliest");
  EXPECT_EQ(PackedSource(docs.dataset, packing(config::Packing::kNone)).costliest_row_spans(),
            (std::vector<std::int64_t>{16}))
      << "a 17-token document fills the 16 input slots";
  const PackedSource packed(docs.dataset, packing(config::Packing::kDocuments));
  const std::vector<std::int64_t> spans = packed.costliest_row_spans();
  std::int64_t slots = 0, cost = 0;
  for (const std::int64_t span : spans) slots += span, cost += span * span;
  EXPECT_LE(slots, kSeqLen);
  EXPECT_GE(cost, 16 * 16);  // no row costs less than the one holding the 17-token document
}

TEST(PackedSource, NeedsDocumentOffsets) {
  const std::string path = nss::testing::scratch_dir("packing_offsets") + "/plain.h5";
  std::vector<std::int64_t> tokens(100, 3);
  TokenFileWriter writer(path, DType::kUInt16, 100);
  writer.append(tokens.data(), 100);
  writer.commit({});
  EXPECT_THROW(PackedSource(TokenDataset::open(path), packing(config::Packing::kDocuments)),
               DataError);
}

TEST(SamplePlan, PackedEpochsOfDifferentSizesStepTheSameAsAtOnce) {
  const Documents docs = make_documents(varied_lengths(90), "plan");
  const auto source =
      std::make_shared<PackedSource>(docs.dataset, packing(config::Packing::kDocuments));
  SamplingConfig sampling{kSeqLen, 4, 1, 0, 1, 7};
  const SamplePlan plan(source, sampling);
  std::set<std::int64_t> sizes;
  for (std::int64_t e = 0; e < 6; ++e) sizes.insert(source->samples_in_epoch(e));
  EXPECT_GT(sizes.size(), 1u) << "this data should pack differently per epoch";
  LoaderPosition stepped;
  for (int i = 0; i < 40; ++i) {
    stepped = plan.advance(stepped, 1);
    EXPECT_EQ(stepped, plan.advance({0, 0}, i + 1));
    EXPECT_LE(stepped.cursor + 4, source->samples_in_epoch(stepped.epoch));
  }
}

TEST(DataLoader, PackedRowsResumeAtAnotherWorldSize) {
  const Documents docs = make_documents(varied_lengths(200), "loader");
  DataLoaderOptions one;
  one.sampling = {kSeqLen, 8, 2, 0, 1, 7};
  one.packing = config::Packing::kDocuments;
  one.num_workers = 2;
  DataLoader reference(docs.dataset, one);
  std::vector<MicroBatch> expected;
  for (int i = 0; i < 4 * 12; ++i) expected.push_back(reference.next());

  // Two ranks from the position after step 5: together they read the same rows.
  for (std::int64_t rank = 0; rank < 2; ++rank) {
    DataLoaderOptions two = one;
    two.sampling.rank = rank;
    two.sampling.world_size = 2;
    two.start = expected[4 * 5].position;
    two.first_step = 5;
    DataLoader resumed(docs.dataset, two);
    for (int step = 5; step < 12; ++step)
      for (int micro = 0; micro < 2; ++micro) {
        const MicroBatch got = resumed.next();
        const MicroBatch& want = expected[static_cast<std::size_t>(4 * step + 2 * rank + micro)];
        EXPECT_EQ(got.sample_ids, want.sample_ids);
        EXPECT_EQ(got.tokens, want.tokens);
        EXPECT_EQ(got.segments, want.segments);
        EXPECT_EQ(got.target_mask, want.target_mask);
      }
  }
}

TEST(SequentialBatchReader, PacksInFileOrder) {
  const Documents docs = make_documents({10, 6, 9, 4, 12, 3}, "sequential");
  const SequentialBatchReader reader(docs.dataset, kSeqLen, 2, 1, 0, 1,
                                     config::Packing::kDocuments);
  const TokenBatch batch = reader.batch(0);
  // Next-fit in file order: [10, 6] (16 tokens), [9, 4] (13 tokens).
  EXPECT_EQ(batch.tokens[0], 1000);
  EXPECT_EQ(batch.tokens[10], 2000);
  EXPECT_EQ(batch.tokens[kSeqLen + 1], 3000);
  EXPECT_EQ(batch.tokens[kSeqLen + 1 + 9], 4000);
  EXPECT_THROW(SequentialBatchReader(docs.dataset, kSeqLen, 2, 4, 0, 1, config::Packing::kNone),
               DataError);
}

}  // namespace
}  // namespace nss::data
