// Every rule of the synthetic-record check, on hand-written completions: the
// columns exactly, numbers where the table held numbers, strings or numbers
// elsewhere, empty cells only where the table had them, one record per line.
#include "generate/record_validator.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace nss::generate {
namespace {

const char* kSchema = R"({"columns":[{"name":"name","type":"string","empty_cells":false},)"
                      R"({"name":"age","type":"number","empty_cells":false},)"
                      R"({"name":"note","type":"string","empty_cells":true}]})";

std::vector<std::string> reasons(const std::string& completion) {
  std::vector<std::string> out;
  for (const auto& r : check_completion(RecordSchema::from_json(kSchema), completion))
    out.push_back(r.valid ? "valid" : r.reason);
  return out;
}

TEST(RecordValidator, AcceptsRecordsLikeTheTablesRows) {
  EXPECT_EQ(reasons(R"({"name":"Ada","age":36,"note":""})"), std::vector<std::string>{"valid"});
  // Keys in another order, a number in a string column (csv rows keep number
  // literals as numbers), grouped records one per line, CRLF and blank lines.
  EXPECT_EQ(reasons("{\"age\":1.5e3,\"name\":7,\"note\":\"x\"}\r\n\n  \n"
                    "{\"name\":\"Bo\",\"age\":-2,\"note\":\"a, \\\"b\\\"\"}"),
            (std::vector<std::string>{"valid", "valid"}));
}

TEST(RecordValidator, RejectsEachBrokenRuleWithItsReason) {
  EXPECT_EQ(reasons(R"({"name":"Ada","age":36})"),
            std::vector<std::string>{"column note is missing"});
  EXPECT_EQ(reasons(R"({"name":"Ada","age":36,"note":"","city":"Paris"})"),
            std::vector<std::string>{"column city is not in the table"});
  EXPECT_EQ(reasons(R"({"name":"Ada","age":"36","note":""})"),
            std::vector<std::string>{"column age: \"36\" is not a number"});
  EXPECT_EQ(reasons(R"({"name":"","age":36,"note":""})"),
            std::vector<std::string>{"column name: empty, but the table had no empty cell there"});
  EXPECT_EQ(reasons(R"({"name":"Ada","age":"","note":""})"),
            std::vector<std::string>{"column age: empty, but the table had no empty cell there"});
  EXPECT_EQ(reasons(R"({"name":null,"age":36,"note":""})"),
            std::vector<std::string>{"column name: null is null, not a string or number"});
  EXPECT_EQ(reasons(R"({"name":"Ada","age":[36],"note":""})"),
            std::vector<std::string>{"column age: [36] is array, not a number"});
  EXPECT_EQ(reasons(R"(["Ada",36,""])"), std::vector<std::string>{"not a JSON object"});
  EXPECT_EQ(reasons(R"({"name":"Ada","age":36,"note":"")"),
            std::vector<std::string>{"not valid JSON"});
  EXPECT_EQ(reasons("Sure! Here is a record:"), std::vector<std::string>{"not valid JSON"});
}

TEST(RecordValidator, WritesValidRecordsAsCsvInSchemaOrder) {
  const RecordSchema schema = RecordSchema::from_json(kSchema);
  EXPECT_EQ(csv_header(schema), "name,age,note\n");
  const auto checked = check_completion(schema, R"({"note":"a, \"b\"\nc","age":36,"name":"Ada"})");
  ASSERT_TRUE(checked.at(0).valid);
  EXPECT_EQ(csv_line(schema, checked[0].record), "Ada,36,\"a, \"\"b\"\"\nc\"\n");
}

TEST(RecordValidator, ANumberNoDoubleHoldsIsInvalidNotAnError) {
  RecordSchema schema;
  schema.columns = {{"n", true, false}};
  const auto checked = check_completion(schema, "{\"n\":5002963E797}\n{\"n\":1e99}");
  ASSERT_EQ(checked.size(), 2u);
  EXPECT_FALSE(checked[0].valid);
  EXPECT_EQ(checked[0].reason, "a number too large for a double");
  EXPECT_TRUE(checked[1].valid);
}

TEST(RecordValidator, ReadsTheValueBoundsOrKeepsTheDefaultsOfOlderData) {
  const RecordSchema older =
      RecordSchema::from_json(R"({"columns":[{"name":"a","type":"string","empty_cells":false}]})");
  EXPECT_FALSE(older.columns[0].limits_recorded);
  EXPECT_EQ(older.columns[0].limits.string_chars, 256);
  const RecordSchema bounded = RecordSchema::from_json(
      R"({"columns":[{"name":"a","type":"number","empty_cells":true,"max_chars":0,)"
      R"("max_integer_digits":4,"max_fraction_digits":2,"max_exponent_digits":0}]})");
  ASSERT_TRUE(bounded.columns[0].limits_recorded);
  EXPECT_EQ(bounded.columns[0].limits.integer_digits, 4);
  EXPECT_EQ(bounded.columns[0].limits.fraction_digits, 2);
  EXPECT_EQ(bounded.columns[0].limits.exponent_digits, 0);
  EXPECT_THROW(RecordSchema::from_json(
                   R"({"columns":[{"name":"a","type":"string","empty_cells":false,"max_chars":-1,)"
                   R"("max_integer_digits":0,"max_fraction_digits":0,"max_exponent_digits":0}]})"),
               DataError);
}

TEST(RecordValidator, DigitStringColumnsTakeDigitsOrNumbers) {
  const RecordSchema schema = RecordSchema::from_json(
      R"({"columns":[{"name":"zip","type":"string","empty_cells":false,"max_chars":5,)"
      R"("max_integer_digits":5,"max_fraction_digits":0,"max_exponent_digits":0,)"
      R"("digit_strings":true,"missing_values":["NA","n/a"]}]})");
  ASSERT_TRUE(schema.columns[0].digit_strings);
  auto reason = [&](const std::string& record) {
    const auto checked = check_completion(schema, record);
    return checked.at(0).valid ? std::string("valid") : checked[0].reason;
  };
  EXPECT_EQ(reason(R"({"zip":"06647"})"), "valid");
  EXPECT_EQ(reason(R"({"zip":10009})"), "valid");
  EXPECT_EQ(reason(R"({"zip":"NA"})"), "valid");
  EXPECT_EQ(reason(R"({"zip":"n/a"})"), "valid");
  EXPECT_EQ(reason(R"({"zip":"B89"})"),
            "column zip: \"B89\" is neither a string of digits nor a missing value the table "
            "held there");
  EXPECT_NE(reason(R"({"zip":"null"})"), "valid");  // a spelling the table did not hold
  // Older data (no digit_strings key) takes any string.
  EXPECT_FALSE(RecordSchema::from_json(kSchema).columns[0].digit_strings);
}

TEST(RecordValidator, RefusesASchemaItCannotRead) {
  EXPECT_THROW(RecordSchema::from_json("{}"), DataError);
  EXPECT_THROW(RecordSchema::from_json(R"({"columns":[]})"), DataError);
  EXPECT_THROW(
      RecordSchema::from_json(R"({"columns":[{"name":"a","type":"date","empty_cells":false}]})"),
      DataError);
}

}  // namespace
}  // namespace nss::generate
