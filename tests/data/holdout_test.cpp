// The records holdout: its size rules (NeMo Safe Synthesizer's), groups and
// identical rows never split, determinism per seed, and what
// nss_prepare_data writes (the holdout CSV, owner-only; the attributes; the
// --holdout-eval token file; training never holds a holdout row).
#include "data/holdout.h"

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <sys/stat.h>

#include <gtest/gtest.h>

#include "core/error.h"
#include "data/byte_tokenizer.h"
#include "data/csv_records.h"
#include "data/prepare_dataset.h"
#include "data/records_holdout.h"
#include "data/token_dataset.h"
#include "support/test_paths.h"

namespace nss::data {
namespace {

HoldoutOptions sized(const std::string& size, std::uint64_t seed = 0) {
  HoldoutOptions options;
  options.size = size;
  options.seed = seed;
  return options;
}

std::vector<std::string> distinct_keys(int rows) {
  std::vector<std::string> keys;
  for (int r = 0; r < rows; ++r) keys.push_back("row" + std::to_string(r));
  return keys;
}

TEST(Holdout, TargetIsAFractionOrACountCappedAtTheMaximum) {
  EXPECT_EQ(holdout_target(sized("0.05"), 1000), 50);
  EXPECT_EQ(holdout_target(sized("0.05"), 1019), 50);  // truncated, as NeMo Safe Synthesizer does
  EXPECT_EQ(holdout_target(sized("0.05"), 100000), 2000);
  EXPECT_EQ(holdout_target(sized("300"), 1000), 300);
  EXPECT_EQ(holdout_target(sized("1"), 1000), 1);
  EXPECT_EQ(holdout_target(sized("0"), 1000), 0);
  EXPECT_EQ(holdout_target(sized(""), 1000), 0);
  HoldoutOptions capped = sized("500");
  capped.max_rows = 120;
  EXPECT_EQ(holdout_target(capped, 1000), 120);
  for (const char* bad : {"abc", "-0.1", "1.5", "0.05x", "nan", "inf", "1e999"}) {
    EXPECT_THROW(holdout_target(sized(bad), 1000), UsageError) << bad;
  }
  HoldoutOptions negative = sized("0.1");
  negative.max_rows = -1;
  EXPECT_THROW(holdout_target(negative, 1000), UsageError);
}

TEST(Holdout, DistinctRowsGiveTheExactCountAndTheSeedChoosesWhich) {
  const auto keys = distinct_keys(1000);
  const HoldoutSplit a = split_holdout(keys, sized("0.05", 1));
  EXPECT_EQ(a.rows, 50);
  EXPECT_EQ(a.groups, 50);
  EXPECT_EQ(std::count(a.held_out.begin(), a.held_out.end(), true), 50);
  EXPECT_TRUE(a.warning.empty());
  EXPECT_EQ(split_holdout(keys, sized("0.05", 1)).held_out, a.held_out);  // deterministic
  const HoldoutSplit b = split_holdout(keys, sized("0.05", 2));
  EXPECT_NE(b.held_out, a.held_out);
  // Spread over the table, not its head or tail.
  std::int64_t first_half = 0;
  for (std::size_t r = 0; r < 500; ++r) first_half += a.held_out[r];
  EXPECT_GT(first_half, 10);
  EXPECT_LT(first_half, 40);
}

TEST(Holdout, GroupsAndIdenticalRowsStayTogether) {
  std::vector<std::string> keys;
  for (int r = 0; r < 600; ++r) keys.push_back("g" + std::to_string(r % 37));  // 37 groups
  const HoldoutSplit split = split_holdout(keys, sized("100", 3));
  EXPECT_TRUE(split.warning.empty()) << split.warning;
  std::map<std::string, std::set<bool>> sides;
  for (std::size_t r = 0; r < keys.size(); ++r) sides[keys[r]].insert(split.held_out[r]);
  for (const auto& [key, side] : sides) EXPECT_EQ(side.size(), 1u) << key;
  EXPECT_LE(std::abs(split.rows - 100), 8);  // groups of 16 or 17 rows
  EXPECT_EQ(split.rows, std::count(split.held_out.begin(), split.held_out.end(), true));
}

TEST(Holdout, TooSmallATableOrHoldoutWarnsAndHoldsNothingOut) {
  const HoldoutSplit small_table = split_holdout(distinct_keys(150), sized("0.1"));
  EXPECT_TRUE(small_table.held_out.empty());
  EXPECT_NE(small_table.warning.find("of 150 rows: no holdout, the table has fewer than 200 rows"),
            std::string::npos)
      << small_table.warning;
  const HoldoutSplit small_holdout = split_holdout(distinct_keys(300), sized("0.02"));
  EXPECT_TRUE(small_holdout.held_out.empty());
  EXPECT_NE(small_holdout.warning.find("is 6 rows, fewer than 10"), std::string::npos)
      << small_holdout.warning;
  const HoldoutSplit one_group = split_holdout(std::vector<std::string>(400, "same"), sized("50"));
  EXPECT_TRUE(one_group.held_out.empty());
  EXPECT_NE(one_group.warning.find("the 1 groups of rows cannot be split"), std::string::npos)
      << one_group.warning;
  EXPECT_TRUE(split_holdout(distinct_keys(300), sized("0")).warning.empty());
}

class RecordsHoldoutTest : public ::testing::Test {
 protected:
  std::string dir_ = nss::testing::scratch_dir("records_holdout");

  // 400 rows of 40 cities; rows repeat (each city/temp pair twice).
  std::string table() const {
    std::string csv = "city,temp,note\n";
    for (int r = 0; r < 400; ++r)
      csv += "c" + std::to_string(r % 40) + "," + std::to_string(r % 200) + "," +
             ((r % 200) % 7 == 0 ? "\"a, quoted \"\"note\"\"\"" : "") + "\n";
    const std::string path = dir_ + "/table.csv";
    std::ofstream(path) << csv;
    return path;
  }

  PrepareOptions records(const std::string& holdout, const std::string& group_by = "") const {
    PrepareOptions options;
    options.inputs = {table()};
    options.output = dir_ + "/records.h5";
    options.format = InputFormat::kRecords;
    options.records.group_by = group_by;
    options.holdout.size = holdout;
    return options;
  }

  static std::vector<std::string> completions(const std::string& path) {
    const auto dataset = TokenDataset::open(path);
    std::vector<std::int64_t> tokens(static_cast<std::size_t>(dataset->num_tokens()));
    dataset->read(0, dataset->num_tokens(), tokens.data());
    std::vector<std::string> out;
    for (const auto& document :
         byte_tokenizer::decode_documents(tokens.data(), dataset->num_tokens()))
      out.push_back(document.substr(document.find('{')));
    return out;
  }
};

TEST_F(RecordsHoldoutTest, WritesThePrivateHoldoutAndTrainsOnTheRestOnly) {
  PrepareOptions options = records("0.1");
  options.holdout_eval = true;
  const PrepareSummary summary = prepare_dataset(options);
  EXPECT_EQ(summary.holdout_rows, 40);
  EXPECT_EQ(summary.holdout_table, dir_ + "/records.holdout.csv");
  EXPECT_EQ(summary.holdout_tokens, dir_ + "/records.holdout.h5");
  struct stat info {};
  ASSERT_EQ(::stat(summary.holdout_table.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600u);

  const auto dataset = TokenDataset::open(options.output);
  const auto& metadata = dataset->metadata();
  EXPECT_EQ(metadata.holdout.split, "training");
  EXPECT_EQ(metadata.holdout.holdout_table, summary.holdout_table);
  EXPECT_EQ(metadata.holdout.source_table, options.inputs.front());
  EXPECT_EQ(metadata.holdout.holdout_rows, 40);
  EXPECT_EQ(metadata.holdout.training_rows, 360);
  EXPECT_EQ(metadata.holdout.holdout_seed, 0);
  EXPECT_EQ(metadata.documents, 360);
  EXPECT_EQ(TokenDataset::open(summary.holdout_tokens)->metadata().holdout.split, "holdout");

  // The holdout CSV parses back to rows that no training example holds.
  std::ifstream in(summary.holdout_table);
  CsvReader reader(in, summary.holdout_table);
  const auto header = read_csv_header(reader, summary.holdout_table);
  std::vector<std::string> row;
  std::set<std::string> held;
  while (next_csv_row(reader, header, row, summary.holdout_table))
    held.insert(csv_row_to_json(header, row));
  EXPECT_EQ(held.size(), 20u);  // 40 rows, each twice
  const auto trained = completions(options.output);
  EXPECT_EQ(trained.size(), 360u);
  for (const auto& completion : trained) EXPECT_EQ(held.count(completion), 0u) << completion;
  for (const auto& completion : completions(summary.holdout_tokens))
    EXPECT_EQ(held.count(completion), 1u) << completion;
}

TEST_F(RecordsHoldoutTest, GroupedHoldoutKeepsGroupsWhole) {
  const PrepareSummary summary = prepare_dataset(records("100", "city"));
  EXPECT_EQ(summary.holdout_rows, 100);  // groups of 10 rows
  EXPECT_EQ(summary.holdout_groups, 10);
  std::ifstream in(summary.holdout_table);
  CsvReader reader(in, summary.holdout_table);
  const auto header = read_csv_header(reader, summary.holdout_table);
  std::vector<std::string> row;
  std::set<std::string> cities;
  while (next_csv_row(reader, header, row, summary.holdout_table)) cities.insert(row[0]);
  EXPECT_EQ(cities.size(), 10u);
  for (const auto& completion : completions(dir_ + "/records.h5"))
    for (const auto& city : cities)
      EXPECT_EQ(completion.find("\"city\":\"" + city + "\""), std::string::npos);
}

TEST_F(RecordsHoldoutTest, MisuseIsAUsageError) {
  PrepareOptions text = records("0.1");
  text.format = InputFormat::kCsv;
  EXPECT_THROW(prepare_dataset(text), UsageError);
  PrepareOptions eval_alone = records("");
  eval_alone.holdout_eval = true;
  EXPECT_THROW(prepare_dataset(eval_alone), UsageError);
  EXPECT_THROW(prepare_dataset(records("1.5")), UsageError);
  PrepareOptions replaces_input = records("0.1");
  replaces_input.inputs = {dir_ + "/t.holdout.csv"};
  std::filesystem::copy_file(table(), replaces_input.inputs.front());
  replaces_input.output = dir_ + "/t.h5";
  EXPECT_THROW(prepare_dataset(replaces_input), UsageError);
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/t.h5"));
}

}  // namespace
}  // namespace nss::data
