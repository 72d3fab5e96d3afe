// The privacy preflight's dataset statistics (one example per row) against a
// brute-force count over the rows the loader actually reads.
#include "data/example_statistics.h"

#include <algorithm>

#include <gtest/gtest.h>

#include "core/error.h"
#include "data/sample_source.h"
#include "data/token_file_writer.h"
#include "support/test_paths.h"

namespace nss::data {
namespace {

std::shared_ptr<const TokenDataset> dataset_of(const std::vector<std::int64_t>& lengths,
                                               bool with_offsets = true) {
  std::int64_t total = 0;
  for (const auto length : lengths) total += length;
  const std::string path = nss::testing::scratch_dir("example_statistics") + "/docs.h5";
  TokenFileWriter writer(path, DType::kUInt16, total);
  std::int64_t next = 0;
  for (const auto length : lengths) {
    std::vector<std::int64_t> tokens;
    for (std::int64_t i = 0; i < length; ++i) tokens.push_back(next++ % 250);
    writer.append(tokens.data(), length);
    if (with_offsets) writer.end_document();
  }
  writer.commit({});
  return TokenDataset::open(path);
}

TEST(ExampleStatistics, EqualABruteForceCountOverTheRows) {
  std::vector<std::int64_t> lengths;
  for (int d = 0; d < 97; ++d) lengths.push_back(1 + (d * 13) % 41);  // 1..41 tokens
  const auto dataset = dataset_of(lengths);
  for (const std::int64_t seq_len : {1, 8, 16, 40, 64}) {
    const ExampleStatistics stats = example_statistics(*dataset, seq_len);
    // Brute force: read every document as the Poisson loader does (one row
    // each, unshuffled) and count the input slots outside any document.
    const auto source = make_sample_source(
        dataset, {seq_len, config::Packing::kNone, config::LongDocuments::kTruncate, false, 0});
    std::vector<std::int64_t> ids;
    for (std::int64_t d = 0; d < source->samples_in_epoch(0); ++d) ids.push_back(d);
    TokenBatch rows;
    source->read(ids, rows);
    const auto padding = std::count(rows.segments.begin(), rows.segments.end(), -1);
    std::int64_t truncated = 0, lost = 0;
    for (const auto length : lengths)
      if (length > seq_len + 1) {
        ++truncated;
        lost += length - seq_len - 1;
      }
    EXPECT_EQ(stats.examples, 97);
    EXPECT_EQ(rows.rows, 97);
    EXPECT_EQ(stats.longest_example, 41);
    EXPECT_EQ(stats.truncated_examples, truncated) << seq_len;
    EXPECT_EQ(stats.truncated_tokens, lost) << seq_len;
    EXPECT_DOUBLE_EQ(stats.padding_share,
                     static_cast<double>(padding) / static_cast<double>(97 * seq_len))
        << seq_len;
  }
}

TEST(ExampleStatistics, NeedsTheDocuments) {
  const auto dataset = dataset_of({5, 6, 7}, /*with_offsets=*/false);
  try {
    example_statistics(*dataset, 8);
    FAIL() << "no error";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("/document_offsets"), std::string::npos);
  }
}

// Documents of `prompts[d]` prompt tokens then `completions[d]` targets.
std::shared_ptr<const TokenDataset> examples_of(const std::vector<std::int64_t>& prompts,
                                                const std::vector<std::int64_t>& completions) {
  std::int64_t total = 0;
  for (std::size_t d = 0; d < prompts.size(); ++d) total += prompts[d] + completions[d];
  const std::string path = nss::testing::scratch_dir("completion_lengths") + "/examples.h5";
  TokenFileWriter writer(path, DType::kUInt16, total, /*with_loss_mask=*/true);
  for (std::size_t d = 0; d < prompts.size(); ++d) {
    const std::int64_t length = prompts[d] + completions[d];
    std::vector<std::int64_t> tokens(static_cast<std::size_t>(length), 7);
    std::vector<std::uint8_t> mask(static_cast<std::size_t>(length), 0);
    std::fill(mask.begin() + prompts[d], mask.end(), std::uint8_t{1});
    writer.append(tokens.data(), length, mask.data());
    writer.end_document();
  }
  writer.commit({});
  return TokenDataset::open(path);
}

TEST(CompletionLengths, CountEachDocumentsTargets) {
  const auto dataset = examples_of({4, 9, 1, 30}, {12, 3, 40, 0});
  EXPECT_EQ(completion_lengths(*dataset), (std::vector<std::int64_t>{12, 3, 40, 0}));
}

TEST(CompletionLengths, NeedTheDocumentsAndTheirMask) {
  for (const bool with_offsets : {false, true}) {
    const auto dataset = dataset_of({5, 6, 7}, with_offsets);
    try {
      completion_lengths(*dataset);
      FAIL() << "no error";
    } catch (const DataError& e) {
      EXPECT_NE(std::string(e.what()).find(with_offsets ? "no /loss_mask" : "no /document_offsets"),
                std::string::npos)
          << e.what();
    }
  }
}

}  // namespace
}  // namespace nss::data
