// The column decision: share thresholds with and without a header hint,
// missing cells left out, names by shape under a hint, vetoes, fax versus
// phone by header, the options, and the extras only by column context.
#include "pii/column_classifier.h"

#include <string>

#include <gtest/gtest.h>

#include "small_word_lists.h"

namespace nss::pii {
namespace {

class ClassifierTest : public ::testing::Test {
 protected:
  WordLists lists = small_word_lists();
  ValueRules rules{lists};
  ClassifierOptions options;

  ColumnAssignment classify(const std::string& header, const std::vector<std::string>& cells) {
    const std::vector<std::string_view> views(cells.begin(), cells.end());
    return classify_column(header, views, options, rules);
  }
  std::optional<Entity> entity(const std::string& header, const std::vector<std::string>& cells) {
    return classify(header, cells).entity;
  }
};

std::vector<std::string> repeated(std::vector<std::string> cells, int times) {
  std::vector<std::string> out;
  for (int i = 0; i < times; ++i) out.insert(out.end(), cells.begin(), cells.end());
  return out;
}

TEST_F(ClassifierTest, SharesDecideWithoutAHint) {
  const auto emails = repeated(
      {"a@example.com", "b@example.org", "c@example.net", "d@example.com", "not an email"}, 4);
  const ColumnAssignment a = classify("contact", emails);
  EXPECT_EQ(a.entity, Entity::kEmail);
  EXPECT_EQ(a.evidence.source, "values");
  EXPECT_DOUBLE_EQ(a.evidence.share, 0.8);
  EXPECT_EQ(a.evidence.cells_checked, 20u);
  // 60 % is too few without a header, enough with one.
  const auto mixed = repeated({"a@example.com", "b@example.org", "c@example.net", "x", "y"}, 4);
  EXPECT_EQ(entity("contact", mixed), std::nullopt);
  const ColumnAssignment hinted = classify("email", mixed);
  EXPECT_EQ(hinted.entity, Entity::kEmail);
  EXPECT_EQ(hinted.evidence.source, "header+values");
}

TEST_F(ClassifierTest, MissingCellsAreLeftOut) {
  const auto cells = repeated({"234-56-7891", "", "NaN", "N/A", "345-67-8912", "null"}, 3);
  const ColumnAssignment a = classify("id", cells);
  EXPECT_EQ(a.entity, Entity::kSsn);
  EXPECT_EQ(a.evidence.cells_checked, 6u);
  EXPECT_DOUBLE_EQ(a.evidence.share, 1.0);
}

TEST_F(ClassifierTest, NamesByShapeUnderAHint) {
  const auto people = repeated({"Pat Jones", "Mary Smith", "Kim Garcia", "Lou Ray", "Sam Hill"}, 2);
  EXPECT_EQ(entity("customer_name", people), Entity::kName);  // 2 of 5 in the lists
  EXPECT_EQ(entity("comment", people), std::nullopt);
  EXPECT_EQ(entity("product", people), std::nullopt);
  const auto firsts = repeated({"Mary", "Pat", "Kim", "Lou", "Sam"}, 2);
  EXPECT_EQ(entity("first_name", firsts), Entity::kFirstName);
  const auto products =
      repeated({"Grant Tower", "Jordan Air", "Blue Sky", "Red Fox", "Big Top"}, 2);
  EXPECT_EQ(entity("product_name", products), std::nullopt);
}

TEST_F(ClassifierTest, VetoesAndPhoneOrFax) {
  options.entities = all_entities();
  const auto ips = repeated({"10.0.0.1", "1.2.3.4", "2.14.4.1", "3.11.7.2", "4.0.0.0"}, 2);
  EXPECT_EQ(entity("version", ips), std::nullopt);
  EXPECT_EQ(entity("address", ips), Entity::kIpv4);
  const auto phones = repeated({"(415) 555-0134", "212-555-0199", "646.555.0100"}, 3);
  EXPECT_EQ(entity("phone", phones), Entity::kPhoneNumber);
  EXPECT_EQ(entity("office_fax", phones), Entity::kFaxNumber);
  EXPECT_EQ(entity("contact", phones), Entity::kPhoneNumber);
}

TEST_F(ClassifierTest, ExtrasOnlyByColumnContextAndWhenAsked) {
  options.entities = all_entities();
  const auto dates = repeated({"1984-02-29", "1990-12-01", "2001-07-04", "1975-03-15"}, 2);
  EXPECT_EQ(entity("event_date", dates), std::nullopt);
  EXPECT_EQ(entity("date_of_birth", dates), Entity::kDateOfBirth);
  const auto passports = repeated({"X12345678", "123456789", "AB1234567"}, 3);
  EXPECT_EQ(entity("sku", passports), std::nullopt);
  EXPECT_EQ(entity("passport_no", passports), Entity::kPassportNumber);
  const auto licences = repeated({"D123-4567-8901", "S530-1234-5678", "B1234567"}, 3);
  EXPECT_EQ(entity("drivers_license", licences), Entity::kDriversLicense);
  const auto uuids = repeated({"123e4567-e89b-42d3-a456-426614174000"}, 6);
  EXPECT_EQ(entity("request", uuids), Entity::kUuid);
  options.entities = default_entities();
  EXPECT_EQ(entity("request", uuids), std::nullopt);
  EXPECT_EQ(entity("date_of_birth", dates), std::nullopt);
}

TEST_F(ClassifierTest, FewCellsNeedAHintAndEveryCell) {
  EXPECT_EQ(entity("contact", {"a@example.com", "b@example.com"}), std::nullopt);
  EXPECT_EQ(entity("email", {"a@example.com", "b@example.com"}), Entity::kEmail);
  EXPECT_EQ(entity("email", {"a@example.com", "b"}), std::nullopt);
}

TEST_F(ClassifierTest, OptionsWin) {
  const auto emails = repeated({"a@example.com"}, 10);
  options.forced["contact"] = Entity::kName;
  options.forced["other"] = std::nullopt;
  options.kept.insert("kept");
  EXPECT_EQ(classify("contact", emails).evidence.source, "option");
  EXPECT_EQ(entity("contact", emails), Entity::kName);
  EXPECT_EQ(entity("other", emails), std::nullopt);
  EXPECT_EQ(classify("kept", emails).evidence.source, "kept");
  EXPECT_EQ(entity("kept", emails), std::nullopt);
  EXPECT_EQ(classify("plain", {"a", "b", "c", "d", "e"}).evidence.source, "scan");
}

TEST_F(ClassifierTest, LongColumnsAreSampledEvenly) {
  std::vector<std::string> cells(25000, "234-56-7891");
  for (std::size_t i = 0; i < cells.size(); i += 2) cells[i] = "text";
  const ColumnAssignment a = classify("id", cells);
  EXPECT_EQ(a.evidence.cells_checked, kClassifierSample);
  EXPECT_EQ(a.entity, std::nullopt);
}

}  // namespace
}  // namespace nss::pii
