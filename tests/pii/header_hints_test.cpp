// Header tokens as NSS makes them, the hint terms (the extras' included),
// and the vetoes.
#include "pii/header_hints.h"

#include <gtest/gtest.h>

namespace nss::pii {
namespace {

bool hints(const char* header, Entity entity) {
  const auto found = header_hints(header);
  return std::find(found.begin(), found.end(), entity) != found.end();
}

TEST(HeaderHints, TokenizesLikeNss) {
  EXPECT_EQ(tokenize_header("first_name"), (std::vector<std::string>{"first", "name"}));
  EXPECT_EQ(tokenize_header("homePhoneNumber"),
            (std::vector<std::string>{"home", "phone", "number"}));
  EXPECT_EQ(tokenize_header("HTTPServer 2"), (std::vector<std::string>{"http", "server"}));
  EXPECT_EQ(tokenize_header("zip5"), (std::vector<std::string>{"zip5"}));
  EXPECT_EQ(tokenize_header("Date of Birth"), (std::vector<std::string>{"date", "of", "birth"}));
}

TEST(HeaderHints, TermsTokensAndRuns) {
  EXPECT_TRUE(hints("first_name", Entity::kFirstName));
  EXPECT_TRUE(hints("Surname", Entity::kLastName));
  EXPECT_TRUE(hints("customer_name", Entity::kName));
  EXPECT_TRUE(hints("E-mail Address", Entity::kEmail));
  EXPECT_TRUE(hints("cellPhone", Entity::kPhoneNumber));
  EXPECT_TRUE(hints("fax", Entity::kFaxNumber));
  EXPECT_TRUE(hints("SSN", Entity::kSsn));
  EXPECT_TRUE(hints("card_number", Entity::kCreditDebitCard));
  EXPECT_TRUE(hints("zip", Entity::kPostcode));
  EXPECT_TRUE(hints("client_ip", Entity::kIpv4));
  EXPECT_TRUE(hints("client_ip", Entity::kIpv6));
  EXPECT_TRUE(hints("guid", Entity::kUuid));
  EXPECT_TRUE(hints("homepage", Entity::kUrl));
  EXPECT_TRUE(hints("date_of_birth", Entity::kDateOfBirth));
  EXPECT_TRUE(hints("DOB", Entity::kDateOfBirth));
  EXPECT_TRUE(hints("birthDate", Entity::kDateOfBirth));
  EXPECT_TRUE(hints("passport_no", Entity::kPassportNumber));
  EXPECT_TRUE(hints("drivers_license", Entity::kDriversLicense));
  EXPECT_TRUE(hints("DL number", Entity::kDriversLicense));
  EXPECT_FALSE(hints("continent", Entity::kTaxId));  // "tin" only as a whole token
  EXPECT_FALSE(hints("notes", Entity::kName));
}

TEST(HeaderHints, NameIsNoHintBesideCompanyOrUser) {
  EXPECT_FALSE(hints("username", Entity::kName));
  EXPECT_FALSE(hints("user_name", Entity::kName));
  EXPECT_FALSE(hints("company_name", Entity::kName));
  EXPECT_FALSE(hints("product_name", Entity::kName));
  EXPECT_TRUE(hints("name", Entity::kName));
}

TEST(HeaderHints, VetoTokens) {
  EXPECT_TRUE(header_vetoes("ip_version", Entity::kIpv4));
  EXPECT_TRUE(header_vetoes("build ip", Entity::kIpv6));
  EXPECT_FALSE(hints("ip_version", Entity::kIpv4));
  EXPECT_TRUE(header_vetoes("order_card_number", Entity::kCreditDebitCard));
  EXPECT_TRUE(header_vetoes("statement_state", Entity::kState));
  EXPECT_FALSE(header_vetoes("order_id", Entity::kSsn));
  EXPECT_TRUE(header_vetoes("product_name", Entity::kName));
  EXPECT_TRUE(header_vetoes("brand", Entity::kLastName));
}

}  // namespace
}  // namespace nss::pii
