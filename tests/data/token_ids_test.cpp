// Token ids outside [0, vocab_size) that the attributes hide: the sampled
// scan finds negative ids in signed data, and every read after the
// vocabulary check refuses an id outside the model's vocabulary, naming the
// file, the token offset, the id and the vocabulary size, on the trainer's
// loader (worker threads) and on the evaluation reader alike.
#include <gtest/gtest.h>

#include "core/error.h"
#include "data/data_loader.h"
#include "data/dataset_checks.h"
#include "data/h5_test_files.h"
#include "data/sequential_reader.h"
#include "data/token_dataset.h"
#include "support/test_paths.h"

namespace nss::data {
namespace {

using nss::testing::TokensFileSpec;

// Runs `body`, expecting a DataError whose message holds every fragment.
template <class Body>
void expect_data_error(Body body, const std::vector<std::string>& fragments) {
  try {
    body();
    ADD_FAILURE() << "no DataError";
  } catch (const DataError& e) {
    EXPECT_EQ(e.code(), ExitCode::kData);
    const std::string text = e.what();
    for (const auto& fragment : fragments)
      EXPECT_NE(text.find(fragment), std::string::npos) << "'" << fragment << "' not in: " << text;
  }
}

class TokenIdsTest : public ::testing::Test {
 protected:
  std::string dir_ = nss::testing::scratch_dir("token_ids");
  // 1000 tokens i % 250, the last one `spike`.
  std::shared_ptr<const TokenDataset> open(const std::string& name, hid_t type, std::int64_t spike,
                                           std::optional<std::int64_t> max_token_id) {
    TokensFileSpec spec;
    spec.file_type = type;
    spec.spike = spike;
    spec.max_token_id = max_token_id;
    nss::testing::write_tokens_file(dir_ + "/" + name, spec);
    return TokenDataset::open(dir_ + "/" + name);
  }
};

TEST_F(TokenIdsTest, TheScanFindsNegativeIdsInSignedDataWithOrWithoutTheAttribute) {
  for (const auto attribute : {std::optional<std::int64_t>(249), std::optional<std::int64_t>()}) {
    const auto dataset = open("negative.h5", H5T_STD_I32LE, -5, attribute);
    const TokenIdRange range = dataset->token_id_range();
    EXPECT_EQ(range.scanned_tokens, 1000);
    EXPECT_EQ(range.min, -5);
    EXPECT_EQ(range.min_at, 999);
    expect_data_error(
        [&] {
          check_dataset_vocabulary(*dataset, {10, 1, 258});
        },
        {dataset->path(), "has negative token ids", "found id -5 at token 999"});
  }
}

TEST_F(TokenIdsTest, UnsignedDataWithTheAttributeIsNotScanned) {
  const TokenIdRange range = open("plain.h5", H5T_STD_U16LE, 7, 249)->token_id_range();
  EXPECT_EQ(range.scanned_tokens, 0);
  EXPECT_TRUE(range.max_from_attribute);
  EXPECT_EQ(range.max, 249);
}

TEST_F(TokenIdsTest, TheScanOfSignedDataOverrulesAnAttributeThatIsTooSmall) {
  const auto dataset = open("int64.h5", H5T_STD_I64LE, 300, 249);
  const TokenIdRange range = dataset->token_id_range();
  EXPECT_FALSE(range.max_from_attribute);
  EXPECT_EQ(range.max, 300);
  expect_data_error(
      [&] {
        check_dataset_vocabulary(*dataset, {10, 1, 258});
      },
      {"found id 300 at token 999 (its max_token_id attribute says 249)",
       "model.vocab_size is 258"});
}

TEST_F(TokenIdsTest, ReadsRefuseNegativeIdsEvenBeforeAVocabularyIsKnown) {
  const auto dataset = open("negative.h5", H5T_STD_I32LE, -5, std::nullopt);
  std::vector<std::int64_t> out(10);
  EXPECT_NO_THROW(dataset->read(0, 10, out.data()));
  expect_data_error([&] { dataset->read(990, 10, out.data()); },
                    {"token dataset " + dataset->path() + " holds id -5 at token 999 of /tokens",
                     "cannot be negative"});
}

TEST_F(TokenIdsTest, AWrongMaxTokenIdPassesTheCheckButNotTheReadsAfterIt) {
  const auto dataset = open("wrong_attribute.h5", H5T_STD_U16LE, 300, 249);
  std::vector<std::int64_t> out(10);
  dataset->read(990, 10, out.data());  // no vocabulary known yet: 300 is an id like any
  EXPECT_EQ(out[9], 300);
  EXPECT_TRUE(check_dataset_vocabulary(*dataset, {10, 1, 258}).max_from_attribute);
  expect_data_error([&] { dataset->read(990, 10, out.data()); },
                    {"token dataset " + dataset->path() + " holds id 300 at token 999 of /tokens",
                     "outside the model's vocabulary [0, 258) (vocab_size 258)",
                     "its max_token_id attribute says 249, which is wrong"});
}

TEST_F(TokenIdsTest, TheLowestLimitWins) {
  const auto dataset = open("limits.h5", H5T_STD_U16LE, 300, 249);
  std::vector<std::int64_t> out(1);
  dataset->limit_token_ids(301);
  EXPECT_NO_THROW(dataset->read(999, 1, out.data()));
  dataset->limit_token_ids(258);
  dataset->limit_token_ids(1000);
  expect_data_error([&] { dataset->read(999, 1, out.data()); }, {"vocab_size 258"});
}

TEST_F(TokenIdsTest, TheLoaderAndTheEvaluationReaderHandOutNoIdBeyondTheVocabulary) {
  const auto dataset = open("loader.h5", H5T_STD_U16LE, 300, 249);
  check_dataset_vocabulary(*dataset, {9, 1, 258});
  const std::vector<std::string> fragments = {dataset->path(), "holds id 300 at token 999",
                                              "vocab_size 258"};
  // 111 windows of 9 + 1 tokens; the last one, window 110, holds token 999.
  const SequentialBatchReader reader(dataset, 9, 1, 111);
  EXPECT_NO_THROW(reader.batch(0));
  expect_data_error([&] { reader.batch(110); }, fragments);

  DataLoaderOptions options;
  options.sampling = {9, 1, 1, 0, 1, 11};
  options.num_workers = 2;
  DataLoader loader(dataset, options);
  expect_data_error(
      [&] {
        for (int i = 0; i < 111; ++i) loader.next();  // one epoch: every window once
      },
      fragments);
}

}  // namespace
}  // namespace nss::data
