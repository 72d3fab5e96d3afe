// PII handling of a whole table: columns classified once on the training
// rows, each mode applied to training and holdout rows alike (the same value
// gets the same surrogate or hash in both), missing cells and kept columns
// untouched, free text changed only where an entity is; the report written
// owner-only and read back.
#include "pii/table_transform.h"

#include <filesystem>
#include <fstream>
#include <sys/stat.h>

#include <gtest/gtest.h>

#include "core/error.h"
#include "core/output_location.h"
#include "pii/checksums.h"
#include "pii/pii_report.h"
#include "support/test_paths.h"

namespace nss::pii {
namespace {

const std::vector<std::string> kHeader = {"full_name", "email", "ssn", "notes", "age", "city_code"};

TableRows people(int count, int offset) {
  static const char* const kNames[] = {"Mary Smith", "John Garcia", "Linda Nguyen", "James Brown",
                                       "Patricia Jones"};
  TableRows rows;
  for (int i = offset; i < offset + count; ++i) {
    const std::string user = "user" + std::to_string(i);
    const std::string ssn = std::to_string(123 + i % 600) + "-45-" + std::to_string(1000 + i);
    rows.push_back({kNames[i % 5], i % 7 == 0 ? "" : user + "@corp.example.org", ssn,
                    "Call me at 415-555-01" + std::to_string(10 + i % 80) + " or write to " + user +
                        "@corp.example.org.",
                    std::to_string(20 + i % 50), "C" + std::to_string(i % 9)});
  }
  return rows;
}

class TableTransformTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(faker_dir() + "/providers/person/en_US/__init__.py"))
      GTEST_SKIP() << "python3-fake-factory is not installed (" << faker_dir() << ")";
    lists = load_word_lists(faker_dir());
  }
  PiiResult run(PiiMode mode, TableRows& training, TableRows& holdout) {
    PiiOptions options;
    options.mode = mode;
    options.classifier.kept = {"city_code"};
    return transform_tables(kHeader, training, {&holdout}, options, &key, lists);
  }
  WordLists lists;
  PiiKey key = PiiKey::from_hex(std::string(63, 'b') + "1", "test");
};

TEST_F(TableTransformTest, ReplaceChangesEveryEntityCellConsistently) {
  TableRows training = people(60, 0), holdout = people(10, 55);  // rows 55-59 in both
  const TableRows original = training;
  const PiiResult result = run(PiiMode::kReplace, training, holdout);
  ASSERT_EQ(result.columns.size(), kHeader.size());
  EXPECT_EQ(result.columns[1].assigned_entity, Entity::kEmail);
  EXPECT_EQ(result.columns[2].assigned_entity, Entity::kSsn);
  EXPECT_EQ(result.columns[0].assigned_entity, Entity::kName);
  EXPECT_FALSE(result.columns[3].assigned_entity);                 // free text: scanned
  EXPECT_EQ(result.columns[1].counts.at(Entity::kEmail), 60 - 9);  // 9 missing cells
  EXPECT_EQ(result.columns[1].transform_functions, std::set<std::string>{"fake"});
  EXPECT_EQ(result.columns[3].transform_functions, std::set<std::string>{"fake_entities"});
  EXPECT_GT(result.columns[3].counts.at(Entity::kEmail), 0);
  for (std::size_t r = 0; r < training.size(); ++r) {
    EXPECT_NE(training[r][0], original[r][0]);
    if (original[r][1].empty())
      EXPECT_EQ(training[r][1], "");  // missing stays missing
    else
      EXPECT_NE(training[r][1], original[r][1]);
    EXPECT_TRUE(ssn_valid(training[r][2])) << training[r][2];
    EXPECT_EQ(training[r][3].find("@corp.example.org"), std::string::npos) << training[r][3];
    EXPECT_EQ(training[r][3].substr(0, 11), "Call me at ");
    EXPECT_EQ(training[r][4], original[r][4]);  // numbers untouched
    EXPECT_EQ(training[r][5], original[r][5]);  // kept
  }
  for (int r = 0; r < 5; ++r)  // the same rows in both tables: the same surrogates
    EXPECT_EQ(holdout[r], training[55 + r]);
}

TEST_F(TableTransformTest, HashRedactAndDetect) {
  TableRows training = people(30, 0), holdout = people(5, 25);
  run(PiiMode::kHash, training, holdout);
  EXPECT_EQ(training[1][1].size(), 16u);
  EXPECT_EQ(holdout[0][1], training[25][1]);
  TableRows redacted = people(30, 0), held = people(5, 25);
  run(PiiMode::kRedact, redacted, held);
  EXPECT_EQ(redacted[1][1], "<email>");
  EXPECT_NE(redacted[1][3].find("<email>"), std::string::npos) << redacted[1][3];
  TableRows detected = people(30, 0), kept = people(5, 25);
  const PiiResult result = run(PiiMode::kDetect, detected, kept);
  EXPECT_EQ(detected, people(30, 0));
  EXPECT_EQ(kept, people(5, 25));
  EXPECT_TRUE(result.columns[1].transform_functions.empty());
  EXPECT_EQ(result.columns[1].assigned_entity, Entity::kEmail);
}

TEST_F(TableTransformTest, ReportWrittenOwnerOnlyAndReadBack) {
  TableRows training = people(40, 0), holdout = people(5, 40);
  const PiiResult result = run(PiiMode::kReplace, training, holdout);
  const std::string dir = testing::scratch_dir("pii_report");
  OutputTarget target;
  target.path = dir + "/data.pii.json";
  PiiReportInfo info;
  info.entities = default_entities();
  info.source_table = "/data/people.csv";
  info.training_rows = 40;
  info.holdout_rows = 5;
  info.holdout_source_rows = {3, 9, 10, 30, 44};
  info.key_id = key.id();
  target.private_data = true;
  write_output_file(target, pii_report_text(info, result));
  struct stat st {};
  ASSERT_EQ(::stat(target.path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  const PiiReport report = read_pii_report(target.path);
  EXPECT_EQ(report.mode, "replace");
  EXPECT_EQ(report.key_id, key.id());
  EXPECT_EQ(report.training_rows, 40);
  EXPECT_EQ(report.holdout_source_rows, (std::vector<std::int64_t>{3, 9, 10, 30, 44}));
  EXPECT_EQ(report.columns[1].transform_functions, std::vector<std::string>{"fake"});
  ASSERT_EQ(report.columns.size(), kHeader.size());
  EXPECT_EQ(report.columns[1].name, "email");
  EXPECT_EQ(report.columns[1].assigned_entity, "email");
  EXPECT_EQ(report.columns[1].detected_entity_counts.at("email"), 40 - 6);
  std::ifstream in(target.path);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text.find("corp.example.org"), std::string::npos) << "no value in the report";
  std::ofstream(dir + "/other.json") << R"({"format": "something else"})";
  EXPECT_THROW(read_pii_report(dir + "/other.json"), DataError);
  std::ofstream(dir + "/newer.json") << R"({"format": "nss_pii_report", "version": 2})";
  EXPECT_THROW(read_pii_report(dir + "/newer.json"), DataError);
  EXPECT_THROW(read_pii_report(dir + "/missing.json"), DataError);
  // Holdout rows out of order, or fewer than holdout_rows: another table's.
  for (const auto& rows : {std::vector<std::int64_t>{3, 9, 9, 30, 44}, {3, 9, 30, 44}}) {
    info.holdout_source_rows = rows;
    OutputTarget damaged = target;
    damaged.path = dir + "/damaged" + std::to_string(rows.size()) + ".json";
    write_output_file(damaged, pii_report_text(info, result));
    EXPECT_THROW(read_pii_report(damaged.path), DataError);
  }
}

TEST(PiiMode, NamesAndChoices) {
  EXPECT_EQ(parse_pii_mode("hash"), PiiMode::kHash);
  EXPECT_EQ(pii_mode_name(PiiMode::kRedact), "redact");
  EXPECT_THROW(parse_pii_mode("REPLACE"), UsageError);
}

// A tagger that calls every "Zorblax" and "Quendrith" a name and "Velport" a
// city, and counts what it is shown.
class WordTagger : public TextEntityModel {
 public:
  std::vector<std::vector<Span>> find(const std::vector<std::string_view>& cells) override {
    std::vector<std::vector<Span>> out;
    for (const std::string_view cell : cells) {
      seen.emplace_back(cell);
      out.emplace_back();
      for (const auto& [word, entity] :
           {std::pair{"Zorblax", Entity::kName}, std::pair{"Quendrith", Entity::kName},
            std::pair{"Velport", Entity::kCity}})
        for (std::size_t at = cell.find(word); at != std::string_view::npos;
             at = cell.find(word, at + 1))
          out.back().push_back({at, at + std::string_view(word).size(), entity, 0.9});
      std::sort(out.back().begin(), out.back().end(),
                [](const Span& a, const Span& b) { return a.begin < b.begin; });
    }
    return out;
  }
  nlohmann::ordered_json describe() const override { return {{"used", true}}; }
  std::vector<std::string> seen;
};

TEST_F(TableTransformTest, ATextModelAddsSpansThePatternsMissAndYieldsToThem) {
  const std::vector<std::string> header = {"ticket", "notes"};
  TableRows training = {{"1", "Zorblax moved to Velport"},
                        {"2", "Zorblax moved to Velport"},
                        {"3", "mail Quendrith@corp.example.org today"},
                        {"4", "12345"},
                        {"5", ""},
                        {"6", "Met Quendrith and Zorblax"}};
  TableRows holdout = {{"7", "Zorblax in Velport"}};
  WordTagger tagger;
  PiiOptions options;
  options.mode = PiiMode::kRedact;
  options.text_model = &tagger;
  const PiiResult result = transform_tables(header, training, {&holdout}, options, &key, lists);
  EXPECT_EQ(training[0][1], "<name> moved to <city>");
  EXPECT_EQ(training[1][1], training[0][1]);
  // The e-mail pattern's span covers the tagged word: the pattern wins.
  EXPECT_EQ(training[2][1], "mail <email> today");
  EXPECT_EQ(training[5][1], "Met <name> and <name>");
  EXPECT_EQ(holdout[0][1], "<name> in <city>");
  // Distinct cells with a letter, once each per table; no number, no missing cell.
  EXPECT_EQ(tagger.seen, (std::vector<std::string>{
                             "Zorblax moved to Velport", "mail Quendrith@corp.example.org today",
                             "Met Quendrith and Zorblax", "Zorblax in Velport"}));
  const ColumnStatistics& notes = result.columns[1];
  EXPECT_EQ(notes.counts.at(Entity::kName), 4);  // rows 1, 2 and two in row 6
  EXPECT_EQ(notes.unique_counts.at(Entity::kName), 2);
  EXPECT_EQ(notes.counts.at(Entity::kCity), 2);
  EXPECT_EQ(notes.counts.at(Entity::kEmail), 1);
  EXPECT_EQ(notes.cells_with_detection, 4);
}

}  // namespace
}  // namespace nss::pii
