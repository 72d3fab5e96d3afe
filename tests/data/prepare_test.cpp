// nss_prepare_data's conversion in-process: text, JSONL and CSV round trips
// through the byte-level tokenizer and TokenDataset, and every input error.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include <gtest/gtest.h>

#include "core/error.h"
#include "data/byte_tokenizer.h"
#include "data/csv_records.h"
#include "data/prepare_dataset.h"
#include "data/token_dataset.h"
#include "support/test_paths.h"

namespace nss::data {
namespace {

PrepareOptions options_of(std::vector<std::string> inputs, std::string output,
                          std::optional<InputFormat> format = std::nullopt) {
  PrepareOptions options;
  options.inputs = std::move(inputs);
  options.output = std::move(output);
  options.format = format;
  return options;
}

class PrepareTest : public ::testing::Test {
 protected:
  std::string dir_ = nss::testing::scratch_dir("prepare");

  std::string input(const std::string& name, const std::string& content) const {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path, std::ios::binary) << content;
    return path;
  }

  // Prepares `inputs` and decodes the documents back from the written file.
  std::vector<std::string> round_trip(const std::vector<std::string>& inputs,
                                      std::optional<InputFormat> format = std::nullopt) {
    // The output's directory must exist: nss_prepare_data never creates one.
    std::filesystem::create_directories(dir_ + "/out");
    PrepareOptions options = options_of(inputs, dir_ + "/out/tokens.h5", format);
    const PrepareSummary summary = prepare_dataset(options);
    const auto dataset = TokenDataset::open(options.output);
    EXPECT_EQ(dataset->num_tokens(), summary.tokens);
    EXPECT_EQ(dataset->dtype(), DType::kUInt16);
    const auto& metadata = dataset->metadata();
    EXPECT_EQ(metadata.tokenizer, "byte-level");
    EXPECT_EQ(metadata.vocab_size, 258);
    EXPECT_EQ(metadata.documents, summary.documents);
    EXPECT_EQ(metadata.bos_token_id, 256);
    EXPECT_EQ(metadata.eos_token_id, 257);
    std::vector<std::int64_t> tokens(static_cast<std::size_t>(dataset->num_tokens()));
    dataset->read(0, dataset->num_tokens(), tokens.data());
    EXPECT_EQ(metadata.max_token_id, *std::max_element(tokens.begin(), tokens.end()));
    return byte_tokenizer::decode_documents(tokens.data(), dataset->num_tokens());
  }

  void expect_data_error(const std::vector<std::string>& inputs,
                         const std::vector<std::string>& fragments) {
    PrepareOptions options = options_of(inputs, dir_ + "/bad.h5");
    try {
      prepare_dataset(options);
      ADD_FAILURE() << "no error";
    } catch (const DataError& e) {
      for (const auto& fragment : fragments)
        EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos)
            << "'" << fragment << "' not in: " << e.what();
    }
    EXPECT_FALSE(std::filesystem::exists(options.output));
    EXPECT_FALSE(std::filesystem::exists(options.output + ".tmp." + std::to_string(::getpid())));
  }
};

TEST_F(PrepareTest, TextFilesAreOneDocumentEachAndInvalidUtf8PassesThrough) {
  const char raw[] = "caf\xC3\xA9 \xFF\xFE broken \x80 utf-8\n\0end";
  const std::string binary(raw, sizeof raw - 1);
  const auto docs = round_trip({input("a.txt", "Hello,\nworld.\n"), input("b.md", binary)});
  EXPECT_EQ(docs, (std::vector<std::string>{"Hello,\nworld.\n", binary}));
}

TEST_F(PrepareTest, JsonlTakesTextOrTheWholeRecord) {
  const std::string jsonl =
      "{\"text\": \"first \\u00e9 doc\", \"id\": 1}\n"
      "\n"
      "{\"z\": 1, \"a\": [1, 2], \"text\": 5}\r\n"
      "  \n"
      "{\"prompt\": \"q\", \"completion\": \"a\\nb\"}\n";
  const auto docs = round_trip({input("records.jsonl", jsonl)});
  EXPECT_EQ(docs,
            (std::vector<std::string>{"first \xC3\xA9 doc", "{\"z\":1,\"a\":[1,2],\"text\":5}",
                                      "{\"prompt\":\"q\",\"completion\":\"a\\nb\"}"}));
}

TEST_F(PrepareTest, CsvRowsBecomeJsonObjectsInHeaderOrder) {
  const std::string csv =
      "\xEF\xBB\xBFname,age,notes,zip\r\n"
      "Ada,36,\"likes \"\"math\"\", and\nnewlines\",01234\r\n"
      "\r\n"
      "Bob,-1.5e3,,\n"
      "\"\xFF\",0,\"tab\there\",7\n";
  const auto docs = round_trip({input("table.csv", csv)});
  ASSERT_EQ(docs.size(), 3u);
  EXPECT_EQ(docs[0],
            "{\"name\":\"Ada\",\"age\":36,\"notes\":\"likes \\\"math\\\", and\\nnewlines\","
            "\"zip\":\"01234\"}");
  EXPECT_EQ(docs[1], "{\"name\":\"Bob\",\"age\":-1.5e3,\"notes\":\"\",\"zip\":\"\"}");
  EXPECT_EQ(docs[2], "{\"name\":\"\xFF\",\"age\":0,\"notes\":\"tab\\there\",\"zip\":7}");
}

TEST_F(PrepareTest, MixedInputsKeepTheirOrderAndTheFormatOverrides) {
  const auto docs = round_trip({input("one.txt", "plain"), input("two.jsonl", "{\"text\":\"j\"}\n"),
                                input("three.csv", "k\nv\n")});
  EXPECT_EQ(docs, (std::vector<std::string>{"plain", "j", "{\"k\":\"v\"}"}));
  const auto as_text = round_trip({input("four.csv", "k\nv\n")}, InputFormat::kText);
  EXPECT_EQ(as_text, (std::vector<std::string>{"k\nv\n"}));
}

TEST_F(PrepareTest, InputErrorsNameTheFileAndLine) {
  expect_data_error({input("empty.txt", "")}, {"empty.txt is empty"});
  expect_data_error({dir_ + "/missing.txt"},
                    {"cannot read input", "missing.txt", "No such file or directory"});
  std::filesystem::create_directory(dir_ + "/folder");
  expect_data_error({dir_ + "/folder"}, {"not a regular file"});
  expect_data_error({input("blank.jsonl", "\n  \n")}, {"holds no JSONL records"});
  expect_data_error({input("bad.jsonl", "{\"text\":\"ok\"}\n\n{\"text\": oops}\n")},
                    {"bad.jsonl:3: invalid JSON", "syntax error"});
  expect_data_error({input("ragged.csv", "a,b\n1,\"two\nlines\"\n3,4,5\n")},
                    {"ragged.csv:4: CSV row has 3 fields, the header has 2"});
  expect_data_error({input("open.csv", "a,b\n1,\"never closed\n")},
                    {"open.csv:2: a quoted field is never closed"});
  expect_data_error({input("after.csv", "a,b\n1,\"x\"y\n")},
                    {"after.csv:2: text after the closing quote"});
  expect_data_error({input("dup.csv", "a,a\n1,2\n")}, {"dup.csv:1", "names column 'a' twice"});
  expect_data_error({input("unnamed.csv", "a,,c\n1,2,3\n")},
                    {"unnamed.csv:1", "column 2 has no name"});
  expect_data_error({input("blank_name.csv", "a, \n1,2\n")}, {"column 2 has no name"});
  expect_data_error({input("header.csv", "a,b\n")}, {"has a CSV header but no rows"});
  expect_data_error({input("fine.txt", "ok"), input("late.csv", "")}, {"late.csv is empty"});
}

TEST_F(PrepareTest, UsageErrors) {
  const std::string in = input("in.txt", "text");
  EXPECT_THROW(prepare_dataset(options_of({}, dir_ + "/x.h5")), UsageError);
  EXPECT_THROW(prepare_dataset(options_of({in}, in)), UsageError);
  EXPECT_THROW(parse_input_format("xml"), UsageError);
  EXPECT_THROW(input_format_for("data.json"), UsageError);
  EXPECT_EQ(input_format_for("a.JSONL"), InputFormat::kJsonl);
  EXPECT_EQ(input_format_for("a.ndjson"), InputFormat::kJsonl);
  EXPECT_EQ(input_format_for("a.csv"), InputFormat::kCsv);
  EXPECT_EQ(input_format_for("LICENSE"), InputFormat::kText);
}

TEST(CsvRecords, JsonNumberGrammar) {
  for (const char* yes : {"0", "-0", "12", "-3.25", "1e9", "1E+9", "2.5e-3"})
    EXPECT_TRUE(is_json_number(yes)) << yes;
  for (const char* no :
       {"", "-", "007", "+1", "1.", ".5", "1e", "NaN", "inf", " 1", "1 ", "0x10", "1,000"})
    EXPECT_FALSE(is_json_number(no)) << no;
}

TEST(CsvRecords, ReaderReportsRecordStartLines) {
  std::istringstream in("h1,h2\n\"a\nb\",c\n\nd,e");
  CsvReader reader(in, "t.csv");
  std::vector<std::string> fields;
  ASSERT_TRUE(reader.next(fields));
  EXPECT_EQ(reader.record_line(), 1);
  ASSERT_TRUE(reader.next(fields));
  EXPECT_EQ(fields, (std::vector<std::string>{"a\nb", "c"}));
  EXPECT_EQ(reader.record_line(), 2);
  ASSERT_TRUE(reader.next(fields));
  EXPECT_EQ(fields, (std::vector<std::string>{"d", "e"}));
  EXPECT_EQ(reader.record_line(), 5);
  EXPECT_FALSE(reader.next(fields));
}

TEST(ByteTokenizer, EncodesEveryByteBetweenBosAndEos) {
  std::vector<std::int64_t> tokens;
  byte_tokenizer::encode_document(std::string("a\xFF", 2), tokens);
  EXPECT_EQ(tokens, (std::vector<std::int64_t>{256, 97, 255, 257}));
  EXPECT_EQ(byte_tokenizer::document_tokens(2), 4);
}

}  // namespace
}  // namespace nss::data
