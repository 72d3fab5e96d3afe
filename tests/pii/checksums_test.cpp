#include "pii/checksums.h"

#include <string>

#include <gtest/gtest.h>

#include "core/error.h"

namespace nss::pii {
namespace {

TEST(LuhnTest, KnownNumbers) {
  EXPECT_TRUE(luhn_valid("4111111111111111"));
  EXPECT_TRUE(luhn_valid("79927398713"));
  EXPECT_TRUE(luhn_valid("78949"));  // stdnum's example
  EXPECT_FALSE(luhn_valid("7894"));
  EXPECT_FALSE(luhn_valid("4111111111111112"));
  EXPECT_FALSE(luhn_valid("4111111111111121"));  // two digits swapped
}

TEST(LuhnTest, StdnumEdgeCases) {
  EXPECT_TRUE(luhn_valid("0"));  // no length check
  EXPECT_TRUE(luhn_valid("00"));
  EXPECT_FALSE(luhn_valid(""));
  EXPECT_FALSE(luhn_valid("1"));
  EXPECT_FALSE(luhn_valid("4111 1111 1111 1111"));  // no cleaning
  EXPECT_FALSE(luhn_valid("4111-1111-1111-1111"));
  EXPECT_FALSE(luhn_valid(" 4111111111111111"));
  EXPECT_FALSE(luhn_valid("4111111111111111\n"));
  EXPECT_FALSE(luhn_valid("\uFF14111111111111111"));  // a fullwidth digit
  EXPECT_FALSE(luhn_valid("a"));
  EXPECT_FALSE(
      luhn_valid(std::string("41\0"
                             "11",
                             5)));
  EXPECT_FALSE(luhn_valid("\xff"));
}

TEST(LuhnTest, HugeInputs) {
  EXPECT_TRUE(luhn_valid(std::string(1'000'000, '0')));
  EXPECT_FALSE(luhn_valid(std::string(1'000'000, '0') + "1"));
  EXPECT_FALSE(luhn_valid(std::string(1'000'000, 'x')));
}

TEST(LuhnTest, CheckDigitCompletesANumber) {
  EXPECT_EQ(luhn_check_digit("7894"), '9');
  EXPECT_EQ(luhn_check_digit("7992739871"), '3');
  EXPECT_EQ(luhn_check_digit("411111111111111"), '1');
  EXPECT_EQ(luhn_check_digit(""), '0');
  for (const std::string prefix : {"1", "12", "999999", "0000000000000000001"}) {
    EXPECT_TRUE(luhn_valid(prefix + luhn_check_digit(prefix))) << prefix;
  }
  EXPECT_THROW(luhn_check_digit("12a"), InternalError);
}

TEST(SsnTest, StdnumExamplesAndRanges) {
  EXPECT_TRUE(ssn_valid("536-90-4399"));
  EXPECT_TRUE(ssn_valid("536904399"));
  EXPECT_TRUE(ssn_valid("123-45-6789"));  // stdnum accepts it (Presidio does not)
  EXPECT_FALSE(ssn_valid("1112-23333"));  // a dash in the wrong place
  EXPECT_FALSE(ssn_valid("5369-04399"));
  EXPECT_FALSE(ssn_valid("536-90-43990"));
  EXPECT_FALSE(ssn_valid("536 90 4399"));  // only hyphens separate
  EXPECT_FALSE(ssn_valid("000-12-3456"));
  EXPECT_FALSE(ssn_valid("666-12-3456"));
  EXPECT_FALSE(ssn_valid("900-12-3456"));
  EXPECT_FALSE(ssn_valid("123-00-4567"));
  EXPECT_FALSE(ssn_valid("123-45-0000"));
}

TEST(SsnTest, AdvertisedNumbersAsStdnumFormatsThem) {
  for (const char* advertised :
       {"078-05-1120", "457-55-5462", "219-09-9999", "078051120", "457555462", "219099999"}) {
    EXPECT_FALSE(ssn_valid(advertised)) << advertised;
  }
  // stdnum's format() sees the raw text: padded or other-dash forms pass.
  EXPECT_TRUE(ssn_valid(" 078-05-1120"));
  EXPECT_TRUE(ssn_valid(" 078051120"));
  EXPECT_TRUE(ssn_valid("078-05-1120\n"));
  EXPECT_TRUE(ssn_valid("078\u201305\u20131120"));
}

TEST(SsnTest, CleanedLikeStdnum) {
  EXPECT_TRUE(ssn_valid("\uFF15\uFF13\uFF16-90-4399"));  // fullwidth digits
  EXPECT_TRUE(ssn_valid("\u00A0536-90-4399\u3000"));
  EXPECT_TRUE(ssn_valid("536\u221290\u22124399"));        // minus signs
  EXPECT_FALSE(ssn_valid("\u0665\u0663\u0666-90-4399"));  // Arabic-Indic digits are not [0-9]
  EXPECT_FALSE(ssn_valid(""));
  EXPECT_FALSE(ssn_valid("   "));
  EXPECT_FALSE(ssn_valid("536-90-4399x"));
  EXPECT_FALSE(ssn_valid("536-90-4399\xff"));
  EXPECT_FALSE(ssn_valid(std::string(100'000, '1')));
}

TEST(ItinTest, StdnumGroups) {
  EXPECT_TRUE(itin_valid("912-90-3456"));
  EXPECT_TRUE(itin_valid("912903456"));
  EXPECT_TRUE(itin_valid("912-70-3456"));
  EXPECT_TRUE(itin_valid("912-88-3456"));
  EXPECT_TRUE(itin_valid("912-99-3456"));
  EXPECT_FALSE(itin_valid("9129-03456"));
  EXPECT_FALSE(itin_valid("123-45-6789"));
  EXPECT_FALSE(itin_valid("912-93-4567"));
  EXPECT_FALSE(itin_valid("912-89-3456"));
  EXPECT_FALSE(itin_valid("912-55-3456"));  // stdnum has no 50–65 groups
  EXPECT_FALSE(itin_valid("812-70-3456"));
  EXPECT_FALSE(itin_valid(""));
}

TEST(ItinTest, PlausibleAddsPresidioGroups) {
  for (const char* itin : {"912-50-3456", "912-65-3456", "912-70-3456", "912-99-3456"}) {
    EXPECT_TRUE(itin_plausible(itin)) << itin;
  }
  for (const char* not_itin : {"912-49-3456", "912-66-3456", "912-69-3456", "912-89-3456",
                               "912-93-3456", "812-70-3456", "9129-03456"}) {
    EXPECT_FALSE(itin_plausible(not_itin)) << not_itin;
  }
}

TEST(AbaTest, StdnumExamples) {
  EXPECT_TRUE(aba_valid("111000025"));
  EXPECT_TRUE(aba_valid(" 111000025 "));
  EXPECT_TRUE(aba_valid("021000021"));
  EXPECT_FALSE(aba_valid("11100002"));
  EXPECT_FALSE(aba_valid("11100002B"));
  EXPECT_FALSE(aba_valid("112000025"));
  EXPECT_FALSE(aba_valid("111 000 025"));  // rtn deletes nothing
  EXPECT_FALSE(aba_valid("1110000250"));
  EXPECT_FALSE(aba_valid(""));
}

TEST(NhsTest, StdnumExamples) {
  EXPECT_TRUE(nhs_valid("943-476-5870"));
  EXPECT_TRUE(nhs_valid("943 476 5870"));
  EXPECT_TRUE(nhs_valid("9434765870"));
  EXPECT_FALSE(nhs_valid("9434765871"));
  EXPECT_FALSE(nhs_valid("943476587"));
  EXPECT_FALSE(nhs_valid("943.476.5870"));
  EXPECT_FALSE(nhs_valid(""));
}

TEST(NanpTest, AreaCodeAndExchange) {
  EXPECT_TRUE(nanp_valid("2025550143"));
  EXPECT_TRUE(nanp_valid("9999999999"));
  EXPECT_FALSE(nanp_valid("1025550143"));  // area code starts with 1
  EXPECT_FALSE(nanp_valid("0025550143"));
  EXPECT_FALSE(nanp_valid("2021550143"));  // exchange starts with 1
  EXPECT_FALSE(nanp_valid("9115550143"));  // N11 area code
  EXPECT_FALSE(nanp_valid("2024110143"));  // N11 exchange
  EXPECT_TRUE(nanp_valid("2125550143"));   // 212 is no N11
  EXPECT_FALSE(nanp_valid("202555014"));
  EXPECT_FALSE(nanp_valid("20255501430"));
  EXPECT_FALSE(nanp_valid("202-555-0143"));
  EXPECT_FALSE(nanp_valid(""));
}

TEST(CardBrandTest, PrefixesAndLengths) {
  EXPECT_EQ(card_brand("4111111111111111"), CardBrand::kVisa);
  EXPECT_EQ(card_brand("4222222222222"), CardBrand::kVisa);
  EXPECT_EQ(card_brand("4111111111111111111"), CardBrand::kVisa);
  EXPECT_EQ(card_brand("41111111111111"), std::nullopt);  // 14 digits
  EXPECT_EQ(card_brand("5555555555554444"), CardBrand::kMastercard);
  EXPECT_EQ(card_brand("2221000000000009"), CardBrand::kMastercard);
  EXPECT_EQ(card_brand("2720990000000007"), CardBrand::kMastercard);
  EXPECT_EQ(card_brand("2721000000000000"), std::nullopt);
  EXPECT_EQ(card_brand("378282246310005"), CardBrand::kAmex);
  EXPECT_EQ(card_brand("3782822463100050"), std::nullopt);
  EXPECT_EQ(card_brand("6011111111111117"), CardBrand::kDiscover);
  EXPECT_EQ(card_brand("6221260000000000"), CardBrand::kDiscover);  // before UnionPay
  EXPECT_EQ(card_brand("6229260000000000"), CardBrand::kUnionPay);
  EXPECT_EQ(card_brand("30569309025904"), CardBrand::kDiners);
  EXPECT_EQ(card_brand("3530111333300000"), CardBrand::kJcb);
  EXPECT_EQ(card_brand("213100000000000"), CardBrand::kJcb);  // Faker's jcb15
  EXPECT_EQ(card_brand("180000000000000"), CardBrand::kJcb);
  EXPECT_EQ(card_brand("6759649826438453"), CardBrand::kMaestro);
  EXPECT_EQ(card_brand("060400000000"), CardBrand::kMaestro);
  EXPECT_EQ(card_brand("501800000000"), CardBrand::kMaestro);
  EXPECT_EQ(card_brand("352000000000000"), std::nullopt);  // an IMEI-like 35 number
  EXPECT_EQ(card_brand("9111111111111111"), std::nullopt);
  EXPECT_EQ(card_brand(""), std::nullopt);
  EXPECT_EQ(card_brand("4111 1111 1111 1111"), std::nullopt);
  EXPECT_EQ(card_brand(std::string(100'000, '4')), std::nullopt);
}

}  // namespace
}  // namespace nss::pii
