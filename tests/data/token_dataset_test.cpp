// TokenDataset: round trips for every element type, and every way a token
// file can be unusable, each a DataError (exit 4) that names the file and fix.
#include "data/token_dataset.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/sha256.h"
#include "data/dataset_checks.h"
#include "data/h5_check.h"
#include "data/h5_test_files.h"
#include "data/token_file_writer.h"
#include "support/test_paths.h"

namespace nss::data {
namespace {

using nss::testing::TokensFileSpec;
using nss::testing::TokensLayout;

// Opens `path` expecting a DataError whose message contains every fragment.
void expect_open_fails(const std::string& path, const std::vector<std::string>& fragments) {
  try {
    TokenDataset::open(path);
    ADD_FAILURE() << "opening " << path << " did not fail";
  } catch (const DataError& e) {
    EXPECT_EQ(e.code(), ExitCode::kData);
    const std::string text = e.what();
    EXPECT_NE(text.find(path), std::string::npos) << text;
    for (const auto& fragment : fragments)
      EXPECT_NE(text.find(fragment), std::string::npos) << "'" << fragment << "' not in: " << text;
  }
}

class TokenDatasetTest : public ::testing::Test {
 protected:
  std::string dir_ = nss::testing::scratch_dir("token_dataset");
  std::string file(const std::string& name) const { return dir_ + "/" + name; }
  std::string write(const std::string& name, const TokensFileSpec& spec) const {
    nss::testing::write_tokens_file(file(name), spec);
    return file(name);
  }
};

TEST_F(TokenDatasetTest, WriterRoundTripsEveryElementType) {
  const std::vector<std::pair<DType, std::int64_t>> cases = {
      {DType::kUInt16, 65535},
      {DType::kInt32, 2147483647},
      {DType::kUInt32, 4294967295},
      {DType::kInt64, std::int64_t{1} << 40}};
  for (const auto& [dtype, largest] : cases) {
    const std::string path = file(std::string("tokens_") + dtype_name(dtype) + ".h5");
    // More than the writer's buffer, so several blocks are written.
    std::vector<std::int64_t> tokens(3'000'017);
    for (std::size_t i = 0; i < tokens.size(); ++i)
      tokens[i] = static_cast<std::int64_t>(i * 7919 % 50021);
    tokens[12345] = largest;
    {
      TokenFileWriter writer(path, dtype, static_cast<std::int64_t>(tokens.size()));
      writer.append(tokens.data(), 1000);
      writer.append(tokens.data() + 1000, static_cast<std::int64_t>(tokens.size()) - 1000);
      TokenFileMetadata metadata;
      metadata.tokenizer = "test-tokenizer";
      metadata.vocab_size = largest + 1;
      metadata.documents = 3;
      metadata.eos_token_id = 0;
      writer.commit(metadata);
    }
    EXPECT_FALSE(std::filesystem::exists(path + ".tmp." + std::to_string(::getpid())));
    const auto dataset = TokenDataset::open(path);
    EXPECT_EQ(dataset->dtype(), dtype);
    ASSERT_EQ(dataset->num_tokens(), static_cast<std::int64_t>(tokens.size()));
    std::vector<std::int64_t> back(tokens.size());
    dataset->read(0, dataset->num_tokens(), back.data());
    EXPECT_EQ(back, tokens) << dtype_name(dtype);
    std::vector<std::int64_t> slice(5);
    dataset->read(12343, 5, slice.data());
    EXPECT_EQ(slice[2], largest);
    const auto& metadata = dataset->metadata();
    EXPECT_EQ(metadata.tokenizer, "test-tokenizer");
    EXPECT_EQ(metadata.vocab_size, largest + 1);
    EXPECT_EQ(metadata.max_token_id, largest);
    EXPECT_EQ(metadata.documents, 3);
    EXPECT_EQ(metadata.eos_token_id, 0);
    EXPECT_FALSE(metadata.bos_token_id.has_value());
    EXPECT_TRUE(dataset->token_id_range().max_from_attribute);
  }
}

TEST_F(TokenDatasetTest, WriterRejectsIdsThatDoNotFitAndLeavesNoFile) {
  const std::string path = file("overflow.h5");
  {
    TokenFileWriter writer(path, DType::kUInt16, 2);
    const std::int64_t ids[2] = {1, 70000};
    EXPECT_THROW(writer.append(ids, 2), DataError);
  }
  EXPECT_TRUE(std::filesystem::is_empty(dir_));
}

TEST_F(TokenDatasetTest, ReadsFilesWrittenByOtherTools) {
  TokensFileSpec spec;
  spec.file_type = H5T_STD_I32LE;
  spec.fixed_tokenizer = "fixed-length-name";
  const auto dataset = TokenDataset::open(write("other.h5", spec));
  EXPECT_EQ(dataset->dtype(), DType::kInt32);
  EXPECT_EQ(dataset->metadata().tokenizer, "fixed-length-name");
  EXPECT_FALSE(dataset->metadata().vocab_size.has_value());
  const auto expected = nss::testing::expected_tokens(spec);
  std::vector<std::int64_t> back(expected.size());
  dataset->read(0, dataset->num_tokens(), back.data());
  EXPECT_EQ(back, expected);
}

TEST_F(TokenDatasetTest, MissingFile) {
  expect_open_fails(file("nope.h5"), {"does not exist", "nss_prepare_data"});
}

TEST_F(TokenDatasetTest, DirectoryIsNotARegularFile) {
  std::filesystem::create_directory(file("dir.h5"));
  expect_open_fails(file("dir.h5"), {"a directory", "not a regular file"});
}

TEST_F(TokenDatasetTest, FifoFailsAtOnceWithoutWaitingForAWriter) {
  const std::string path = file("fifo.h5");
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  const auto start = std::chrono::steady_clock::now();
  expect_open_fails(path, {"a FIFO", "not a regular file"});
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST_F(TokenDatasetTest, NotHdf5) {
  std::ofstream(file("text.h5")) << "just some text, not HDF5\n";
  expect_open_fails(file("text.h5"), {"not an HDF5 file", "nss_prepare_data"});
}

TEST_F(TokenDatasetTest, NoTokensDataset) {
  TokensFileSpec spec;
  spec.dataset_name = "ids";
  expect_open_fails(write("no_tokens.h5", spec), {"has no /tokens dataset"});
  TokensFileSpec group;
  group.tokens_as_group = true;
  expect_open_fails(write("group.h5", group), {"has no /tokens dataset"});
}

TEST_F(TokenDatasetTest, WrongRank) {
  TokensFileSpec spec;
  spec.dims = {10, 100};
  expect_open_fails(write("rank2.h5", spec), {"has rank 2, not 1", "1-D"});
}

TEST_F(TokenDatasetTest, WrongElementTypes) {
  TokensFileSpec floats;
  floats.file_type = H5T_IEEE_F32LE;
  expect_open_fails(write("float.h5", floats), {"floating-point", "uint16, int32, uint32, int64"});
  TokensFileSpec bytes;
  bytes.file_type = H5T_STD_U8LE;
  expect_open_fails(write("u8.h5", bytes), {"unsigned 8-bit", "uint16"});
  TokensFileSpec big_endian;
  big_endian.file_type = H5T_STD_I32BE;
  expect_open_fails(write("be.h5", big_endian), {"big-endian"});
}

TEST_F(TokenDatasetTest, ChunkedOrCompressedTokensSayHowToRewrite) {
  TokensFileSpec chunked;
  chunked.layout = TokensLayout::kChunked;
  expect_open_fails(write("chunked.h5", chunked),
                    {"is chunked", "h5repack -l /tokens:CONTI", "nss_prepare_data"});
  TokensFileSpec compressed;
  compressed.layout = TokensLayout::kCompressed;
  expect_open_fails(write("gzip.h5", compressed),
                    {"is chunked and filtered/compressed (deflate)", "h5repack -l /tokens:CONTI"});
  TokensFileSpec compact;
  compact.layout = TokensLayout::kCompact;
  compact.dims = {100};
  expect_open_fails(write("compact.h5", compact), {"compact storage", "h5repack"});
}

TEST_F(TokenDatasetTest, EmptyTokens) {
  TokensFileSpec spec;
  spec.dims = {0};
  expect_open_fails(write("empty.h5", spec), {"is empty"});
}

TEST_F(TokenDatasetTest, TruncatedFile) {
  const std::string path = write("truncated.h5", TokensFileSpec{});
  std::filesystem::resize_file(path, std::filesystem::file_size(path) - 1000);
  expect_open_fails(path, {});
}

TEST_F(TokenDatasetTest, TooFewTokensForOneGlobalBatch) {
  const auto dataset = TokenDataset::open(write("short.h5", TokensFileSpec{}));  // 1000 tokens
  DatasetRequirements needs{/*seq_len=*/100, /*min_samples=*/9, /*model_vocab_size=*/258};
  EXPECT_NO_THROW(check_dataset(*dataset, needs));  // (1000 - 1) / 100 = 9 windows
  needs.min_samples = 10;
  try {
    check_dataset(*dataset, needs);
    ADD_FAILURE() << "a dataset shorter than one global batch was accepted";
  } catch (const DataError& e) {
    const std::string text = e.what();
    for (const char* fragment :
         {"too short", "1000 tokens make 9 windows", "needs 10 (1001 tokens)", "global_batch_size"})
      EXPECT_NE(text.find(fragment), std::string::npos) << text;
  }
}

TEST_F(TokenDatasetTest, TooShortNamesWhatTheWindowsAreFor) {
  const auto dataset = TokenDataset::open(write("short_val.h5", TokensFileSpec{}));  // 1000 tokens
  DatasetRequirements needs{/*seq_len=*/100, /*min_samples=*/16, /*model_vocab_size=*/258};
  needs.purpose = "validation (eval.batches = 4 global batches)";
  needs.shorten_hint = "lower eval.batches";
  try {
    check_dataset_length(*dataset, needs);
    ADD_FAILURE() << "a validation file shorter than eval.batches global batches was accepted";
  } catch (const DataError& e) {
    const std::string text = e.what();
    EXPECT_NE(text.find("validation (eval.batches = 4 global batches) needs 16"), std::string::npos)
        << text;
    EXPECT_NE(text.find("lower eval.batches"), std::string::npos) << text;
  }
}

// A model that brings its tokenizer accepts only tokens made with it: the
// tokenizer_sha256 attribute (written and read back) against its tokenizer.json.
// /loss_mask and /document_offsets round-trip through the writer and the
// mapped reader with every preparation attribute; a mask byte other than 0
// reads as a target of weight 1.
TEST_F(TokenDatasetTest, LossMaskOffsetsAndPreparationRoundTrip) {
  const std::string path = file("examples.h5");
  TokenFileWriter writer(path, DType::kUInt16, 7, /*with_loss_mask=*/true);
  const std::vector<std::int64_t> tokens = {256, 10, 11, 257, 256, 12, 257};
  const std::vector<std::uint8_t> mask = {0, 0, 1, 1, 0, 7, 1};
  writer.append(tokens.data(), 4, mask.data());
  writer.end_document();
  writer.append(tokens.data() + 4, 3, mask.data() + 4);
  writer.end_document();
  TokenFileMetadata metadata;
  metadata.tokenizer = "byte-level";
  metadata.dropped_examples = 2;
  metadata.eos_token_id = 257;
  metadata.preparation = {"records", "Generate {columns}\n", "patient", "visit",
                          R"({"columns":[{"name":"visit","type":"number","empty_cells":false}]})"};
  writer.commit(metadata);

  const auto dataset = TokenDataset::open(path);
  EXPECT_TRUE(dataset->has_loss_mask());
  std::vector<std::uint8_t> read(7);
  dataset->read_loss_mask(0, 7, read.data());
  EXPECT_EQ(read, (std::vector<std::uint8_t>{0, 0, 1, 1, 0, 1, 1}));
  ASSERT_EQ(dataset->num_documents(), 2);
  EXPECT_EQ(dataset->document_offset(1), 4);
  EXPECT_EQ(dataset->document_offset(2), 7);
  const TokenFileMetadata& m = dataset->metadata();
  EXPECT_EQ(m.documents, 2);
  EXPECT_EQ(m.dropped_examples, 2);
  EXPECT_EQ(m.preparation.prompt_template, "Generate {columns}\n");
  EXPECT_EQ(m.preparation.order_by, "visit");
  const nlohmann::json described = describe_preparation(m);
  EXPECT_EQ(described.at("records_schema").at("columns").at(0).at("type"), "number");
  EXPECT_EQ(described.at("group_by"), "patient");
  EXPECT_EQ(described.at("eos_token_id"), 257);
  EXPECT_FALSE(described.contains("vocab_size"));
  EXPECT_FALSE(described.contains("bos_token_id"));
  EXPECT_FALSE(described.contains("max_token_id"));
}

TEST_F(TokenDatasetTest, TokensMustComeFromTheModelsTokenizer) {
  const std::string model_dir = dir_ + "/model";
  std::filesystem::create_directories(model_dir);
  EXPECT_TRUE(model_tokenizer(model_dir).path.empty());  // no tokenizer.json: nothing to match
  std::ofstream(model_dir + "/tokenizer.json") << R"({"version": "1.0"})";
  const ModelTokenizer tokenizer = model_tokenizer(model_dir);
  EXPECT_EQ(tokenizer.path, model_dir + "/tokenizer.json");
  EXPECT_EQ(tokenizer.sha256, sha256_hex(R"({"version": "1.0"})"));

  const auto made_with = [&](const std::string& name, const std::string& sha256) {
    const std::string path = file(name);
    TokenFileWriter writer(path, DType::kUInt16, 100);
    std::vector<std::int64_t> tokens(100, 7);
    writer.append(tokens.data(), 100);
    TokenFileMetadata metadata;
    metadata.tokenizer = "hf:" + tokenizer.path;
    metadata.tokenizer_sha256 = sha256;
    writer.commit(metadata);
    return TokenDataset::open(path);
  };
  DatasetRequirements needs{10, 1, 258, tokenizer};
  const auto same = made_with("same.h5", tokenizer.sha256);
  EXPECT_EQ(same->metadata().tokenizer_sha256, tokenizer.sha256);
  EXPECT_NO_THROW(check_dataset(*same, needs));
  for (const std::string& other : {std::string(64, '0'), std::string()}) {
    const auto dataset = made_with("other.h5", other);
    try {
      check_dataset(*dataset, needs);
      ADD_FAILURE() << "tokens of another tokenizer were accepted";
    } catch (const DataError& e) {
      const std::string text = e.what();
      EXPECT_NE(text.find("not with the model's " + tokenizer.path), std::string::npos) << text;
      EXPECT_NE(text.find(other.empty() ? "no tokenizer_sha256 attribute" : other),
                std::string::npos)
          << text;
    }
  }
  needs.model_tokenizer = {};  // the model brings none: any tokens of the vocabulary do
  EXPECT_NO_THROW(check_dataset(*made_with("any.h5", ""), needs));
}

TEST_F(TokenDatasetTest, TokenIdsBeyondTheModelVocabulary) {
  TokensFileSpec spec;
  spec.max_token_id = 249;
  const auto dataset = TokenDataset::open(write("vocab.h5", spec));
  DatasetRequirements needs{10, 1, 250};
  EXPECT_TRUE(check_dataset_vocabulary(*dataset, needs).max_from_attribute);
  needs.model_vocab_size = 249;
  try {
    check_dataset(*dataset, needs);
    ADD_FAILURE() << "ids beyond the vocabulary were accepted";
  } catch (const DataError& e) {
    const std::string text = e.what();
    EXPECT_NE(text.find("max_token_id attribute says 249"), std::string::npos) << text;
    EXPECT_NE(text.find("model.vocab_size is 249"), std::string::npos) << text;
  }
}

TEST_F(TokenDatasetTest, WithoutTheAttributeASampledScanFindsLargeIds) {
  TokensFileSpec spec;
  spec.dims = {200000};
  spec.spike = 60000;  // at the very end: the scan must reach the last block
  const auto dataset = TokenDataset::open(write("scan.h5", spec));
  const TokenIdRange full = dataset->token_id_range();
  EXPECT_FALSE(full.max_from_attribute);
  EXPECT_EQ(full.max, 60000);
  EXPECT_EQ(full.max_at, 199999);
  EXPECT_EQ(full.scanned_tokens, 200000);
  const TokenIdRange sampled = dataset->token_id_range(/*max_scanned=*/10000);
  EXPECT_EQ(sampled.max, 60000);
  EXPECT_LE(sampled.scanned_tokens, 10000);
  try {
    check_dataset_vocabulary(*dataset, DatasetRequirements{10, 1, 32000});
    ADD_FAILURE() << "the scan missed id 60000";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("no max_token_id attribute and a sampled scan"),
              std::string::npos)
        << e.what();
  }
}

TEST(H5Check, ThrowsWithHdf5TextContextAndSourceLine) {
  try {
    NSS_H5_CHECK(H5Fopen("/nonexistent/x.h5", H5F_ACC_RDONLY, H5P_DEFAULT), "the test file");
    ADD_FAILURE() << "no exception";
  } catch (const DataError& e) {
    const std::string text = e.what();
    EXPECT_NE(text.find("[data] H5Fopen failed on the test file: "), std::string::npos) << text;
    EXPECT_NE(text.find("unable to open file"), std::string::npos) << text;
    EXPECT_NE(text.find("token_dataset_test.cpp:"), std::string::npos) << text;
  }
}

}  // namespace
}  // namespace nss::data
