// Whole-cell value rules: each entity's shape and validator, decoys that
// fool a bare pattern, and the rules that answer only under a header hint.
#include "pii/value_rules.h"

#include <gtest/gtest.h>

#include "small_word_lists.h"

namespace nss::pii {
namespace {

class ValueRulesTest : public ::testing::Test {
 protected:
  WordLists lists = small_word_lists();
  ValueRules rules{lists};
  bool is(Entity e, const char* cell, bool hinted = false) {
    return rules.matches(e, cell, hinted);
  }
};

TEST_F(ValueRulesTest, ValidatedFormats) {
  EXPECT_TRUE(is(Entity::kEmail, " ann.lee+x@mail.example.co.uk "));
  EXPECT_FALSE(is(Entity::kEmail, "root@localhost"));
  EXPECT_FALSE(is(Entity::kEmail, "a@b@example.com x"));
  EXPECT_TRUE(is(Entity::kCreditDebitCard, "4111 1111 1111 1111"));
  EXPECT_TRUE(is(Entity::kCreditDebitCard, "378282246310005"));
  EXPECT_FALSE(is(Entity::kCreditDebitCard, "4111111111111112"));  // Luhn
  EXPECT_FALSE(is(Entity::kCreditDebitCard, "356938035643809"));   // Luhn-valid IMEI, JCB length
  EXPECT_TRUE(is(Entity::kSsn, "234-56-7891"));
  EXPECT_FALSE(is(Entity::kSsn, "234567891"));
  EXPECT_TRUE(is(Entity::kSsn, "234567891", true));
  EXPECT_FALSE(is(Entity::kSsn, "666-12-3456"));
  EXPECT_TRUE(is(Entity::kTaxId, "912-70-1234"));
  EXPECT_FALSE(is(Entity::kTaxId, "912-89-1234"));
  EXPECT_TRUE(is(Entity::kIban, "DE89 3704 0044 0532 0130 00"));
  EXPECT_TRUE(is(Entity::kIban, "DE 89-3704.0044 0532 0130 00"));  // stdnum's compact form
  EXPECT_FALSE(is(Entity::kIban, "DE88 3704 0044 0532 0130 00"));
  EXPECT_TRUE(is(Entity::kIpv4, "192.168.0.1"));
  EXPECT_FALSE(is(Entity::kIpv4, "01.2.3.4"));
  EXPECT_TRUE(is(Entity::kIpv6, "2001:db8::1"));
  EXPECT_TRUE(is(Entity::kMacAddress, "00:1a:2b:3c:4d:5e"));
}

TEST_F(ValueRulesTest, PhoneNumbers) {
  EXPECT_TRUE(is(Entity::kPhoneNumber, "(415) 555-0134"));
  EXPECT_TRUE(is(Entity::kPhoneNumber, "+1-415-555-0134 x12"));
  EXPECT_FALSE(is(Entity::kPhoneNumber, "4155550134"));  // no separator, no hint
  EXPECT_TRUE(is(Entity::kPhoneNumber, "4155550134", true));
  EXPECT_FALSE(is(Entity::kPhoneNumber, "115-555-0134"));  // area code 1xx
}

TEST_F(ValueRulesTest, PlacesAndNames) {
  EXPECT_TRUE(is(Entity::kState, "new york"));
  EXPECT_TRUE(is(Entity::kState, "TX"));
  EXPECT_TRUE(is(Entity::kState, "PR"));
  EXPECT_FALSE(is(Entity::kState, "tx"));
  EXPECT_TRUE(is(Entity::kPostcode, "02134-1234"));
  EXPECT_FALSE(is(Entity::kPostcode, "2134"));
  EXPECT_TRUE(is(Entity::kPostcode, "2134", true));
  EXPECT_TRUE(is(Entity::kStreetAddress, "1234 N. Elm Street Apt 5"));
  EXPECT_TRUE(is(Entity::kStreetAddress, "12 Oak Blvd"));
  EXPECT_FALSE(is(Entity::kStreetAddress, "Oak Street"));
  EXPECT_TRUE(is(Entity::kAddress, "12 Oak Blvd, Springfield, TX 75001"));
  EXPECT_TRUE(is(Entity::kAddress, "12 Oak Blvd. Apt 4, North Springfield,new york."));
  EXPECT_TRUE(is(Entity::kAddress, "Ohio, 43004"));
  EXPECT_FALSE(is(Entity::kAddress, "12 Oak Blvd, Springfield"));
  EXPECT_TRUE(is(Entity::kFirstName, "Mary"));
  EXPECT_FALSE(is(Entity::kFirstName, "Tower"));
  EXPECT_TRUE(is(Entity::kLastName, "Wagner-Gomez"));
  EXPECT_TRUE(is(Entity::kName, "Dr. Mary Jones"));
  EXPECT_TRUE(is(Entity::kName, "Garcia, Pat"));
  EXPECT_FALSE(is(Entity::kName, "Pat Jones"));
  EXPECT_TRUE(rules.name_shaped(Entity::kName, "Pat Jones"));
  EXPECT_FALSE(rules.name_shaped(Entity::kName, "pat 2 jones"));
  EXPECT_FALSE(is(Entity::kCity, "Springfield"));
  EXPECT_TRUE(is(Entity::kCity, "St. Louis", true));
}

TEST_F(ValueRulesTest, TheExtraEntities) {
  EXPECT_TRUE(is(Entity::kUuid, "123e4567-e89b-42d3-a456-426614174000"));
  EXPECT_FALSE(is(Entity::kUuid, "123e4567e89b42d3a456426614174000"));
  EXPECT_TRUE(is(Entity::kUuid, "123e4567e89b42d3a456426614174000", true));
  EXPECT_TRUE(is(Entity::kUrl, "https://shop.example.com/a?b=1"));
  EXPECT_TRUE(is(Entity::kUrl, "www.example.org"));
  EXPECT_FALSE(is(Entity::kUrl, "example.org"));
  EXPECT_TRUE(is(Entity::kUrl, "example.org", true));
  EXPECT_FALSE(is(Entity::kUrl, "http://localhost:8080/"));
  // Only a header makes a date a birth date, or a number a passport or licence.
  EXPECT_FALSE(is(Entity::kDateOfBirth, "1984-02-29"));
  EXPECT_TRUE(is(Entity::kDateOfBirth, "1984-02-29", true));
  EXPECT_FALSE(is(Entity::kDateOfBirth, "1983-02-29", true));
  EXPECT_FALSE(is(Entity::kPassportNumber, "X12345678"));
  EXPECT_TRUE(is(Entity::kPassportNumber, "X12345678", true));
  EXPECT_FALSE(is(Entity::kPassportNumber, "hello", true));
  EXPECT_FALSE(is(Entity::kDriversLicense, "D123-4567-8901"));
  EXPECT_TRUE(is(Entity::kDriversLicense, "D123-4567-8901", true));
  EXPECT_FALSE(is(Entity::kDriversLicense, "ABCDEF", true));
}

}  // namespace
}  // namespace nss::pii
