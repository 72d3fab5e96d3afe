#include "pii/entity.h"

#include <algorithm>
#include <set>

#include <gtest/gtest.h>

#include "core/error.h"

namespace nss::pii {
namespace {

TEST(EntityTest, DefaultsAreNssFifteenInItsOrder) {
  std::vector<std::string> names;
  for (Entity e : default_entities()) names.emplace_back(entity_name(e));
  const std::vector<std::string> nss = {
      "first_name", "last_name", "name",        "street_address", "city",
      "state",      "postcode",  "address",     "phone_number",   "fax_number",
      "email",      "ssn",       "national_id", "tax_id",         "credit_debit_card"};
  EXPECT_EQ(names, nss);
}

TEST(EntityTest, AllAddsTheNineExtras) {
  ASSERT_EQ(all_entities().size(), 24u);
  std::vector<std::string> extras;
  for (std::size_t i = 15; i < 24; ++i) extras.emplace_back(entity_name(all_entities()[i]));
  EXPECT_EQ(extras,
            (std::vector<std::string>{"iban", "ipv4", "ipv6", "mac_address", "uuid", "url",
                                      "date_of_birth", "passport_number", "drivers_license"}));
  for (const char* extra : {"uuid", "url", "date_of_birth", "passport_number", "drivers_license"}) {
    const auto& defaults = default_entities();
    EXPECT_EQ(std::count(defaults.begin(), defaults.end(), *parse_entity(extra)), 0) << extra;
  }
}

TEST(EntityTest, NamesRoundTripAndAreDistinct) {
  std::set<std::string_view> seen;
  for (Entity e : all_entities()) {
    EXPECT_EQ(parse_entity(entity_name(e)), e);
    EXPECT_TRUE(seen.insert(entity_name(e)).second);
  }
  EXPECT_EQ(parse_entity("Email"), std::nullopt);
  EXPECT_EQ(parse_entity(""), std::nullopt);
  EXPECT_EQ(parse_entity("none"), std::nullopt);
  EXPECT_EQ(parse_entity("email "), std::nullopt);
}

TEST(EntityTest, RedactionIsNssAngleBrackets) {
  EXPECT_EQ(redaction(Entity::kEmail), "<email>");
  EXPECT_EQ(redaction(Entity::kCreditDebitCard), "<credit_debit_card>");
  EXPECT_EQ(redaction(Entity::kMacAddress), "<mac_address>");
  EXPECT_EQ(redaction(Entity::kDateOfBirth), "<date_of_birth>");
}

TEST(EntityTest, ParsesListsInTheirOrderWithoutRepeats) {
  EXPECT_EQ(parse_entity_list("ssn, email ,ssn"),
            (std::vector<Entity>{Entity::kSsn, Entity::kEmail}));
  EXPECT_EQ(parse_entity_list("iban"), (std::vector<Entity>{Entity::kIban}));
  EXPECT_EQ(parse_entity_list("all"), all_entities());
  EXPECT_EQ(parse_entity_list(" all "), all_entities());
}

TEST(EntityTest, UnknownOrEmptyNamesAreUsageErrorsListingTheValidNames) {
  for (const char* list : {"email,phone", "", "email,", ",email", "email,,ssn", "all,email"}) {
    try {
      parse_entity_list(list);
      ADD_FAILURE() << "accepted '" << list << "'";
    } catch (const UsageError& e) {
      EXPECT_EQ(e.component(), "pii");
      EXPECT_NE(e.message().find(list), std::string::npos) << e.message();
      EXPECT_NE(e.hint().find("first_name, last_name"), std::string::npos) << e.hint();
      EXPECT_NE(e.hint().find("drivers_license, or all"), std::string::npos) << e.hint();
    }
  }
  try {
    parse_entity_list("email,phone");
  } catch (const UsageError& e) {
    EXPECT_NE(e.message().find("unknown PII entity 'phone'"), std::string::npos) << e.message();
  }
}

}  // namespace
}  // namespace nss::pii
