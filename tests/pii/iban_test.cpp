#include "pii/iban.h"

#include <string>

#include <gtest/gtest.h>

#include "core/error.h"

namespace nss::pii {
namespace {

TEST(IbanRegistryTest, EightyTwoCountriesSortedWithTheirLengths) {
  const std::vector<IbanCountry>& countries = iban_countries();
  ASSERT_EQ(countries.size(), 82u);
  for (std::size_t i = 1; i < countries.size(); ++i) {
    EXPECT_LT(countries[i - 1].code, countries[i].code);
  }
  const IbanCountry* de = iban_country("DE");
  ASSERT_NE(de, nullptr);
  EXPECT_EQ(de->structure, "8!n10!n");
  EXPECT_EQ(de->bban_length, 18u);
  ASSERT_EQ(de->fields.size(), 2u);
  EXPECT_EQ(de->fields[0].count, 8);
  EXPECT_EQ(de->fields[0].characters, BbanCharacters::kDigits);
  const IbanCountry* br = iban_country("BR");
  ASSERT_NE(br, nullptr);
  EXPECT_EQ(br->bban_length, 25u);
  EXPECT_EQ(br->fields[3].characters, BbanCharacters::kUppercase);
  EXPECT_EQ(br->fields[4].characters, BbanCharacters::kAlphanumeric);
  EXPECT_EQ(iban_country("NO")->bban_length, 11u);
  EXPECT_EQ(iban_country("LC")->bban_length, 28u);
  EXPECT_EQ(iban_country("XX"), nullptr);
  EXPECT_EQ(iban_country("de"), nullptr);
  EXPECT_EQ(iban_country(""), nullptr);
  EXPECT_EQ(iban_country("FK"), nullptr);  // stdnum 2.x only
}

TEST(IbanTest, StdnumExamples) {
  EXPECT_TRUE(iban_valid("GR16 0110 1050 0000 1054 7023 795"));
  EXPECT_TRUE(iban_valid("BE31435411161155"));
  EXPECT_TRUE(iban_valid("gr16-0110.1050 0000 1054 7023 795"));
  EXPECT_TRUE(iban_valid("GB82WEST12345698765432"));
  EXPECT_TRUE(iban_valid("DE89370400440532013000"));
  EXPECT_EQ(iban_compact("GR16 0110 1050 0000 1054 7023 795"), "GR1601101050000010547023795");
  EXPECT_EQ(iban_check_digits("BE", "435411161155"), "31");
  EXPECT_EQ(iban_check_digits("GB", "WEST12345698765432"), "82");
}

TEST(IbanTest, Invalid) {
  EXPECT_FALSE(iban_valid("GB82WEST12345698765433"));  // one digit changed
  EXPECT_FALSE(iban_valid("GB82WEST12345698765423"));  // two digits swapped
  EXPECT_FALSE(iban_valid("GB82WEST1234569876543"));   // too short
  EXPECT_FALSE(iban_valid("XX82WEST12345698765432"));
  EXPECT_FALSE(iban_valid("GB82 WEST 1234 5698 7654 32x"));
  EXPECT_FALSE(iban_valid("GB82\tWEST12345698765432"));  // a tab is not deleted
  EXPECT_FALSE(iban_valid(""));
  EXPECT_FALSE(iban_valid("1"));  // mod 97 is 1, but no country
  EXPECT_FALSE(iban_valid("GB"));
  EXPECT_FALSE(iban_valid("GB82"));
  EXPECT_FALSE(iban_valid("GB82WEST12345698765432\xff"));
  EXPECT_FALSE(iban_valid("\xffGB82WEST12345698765432"));
}

TEST(IbanTest, StructureIsCheckedEvenWithGoodCheckDigits) {
  // A BBAN with a letter where GB wants digits, its check digits recomputed.
  const std::string bban = "WEST1234569876543A";
  EXPECT_FALSE(iban_valid("GB" + iban_check_digits("GB", bban) + bban));
  const std::string longer = "WEST123456987654321";
  EXPECT_FALSE(iban_valid("GB" + iban_check_digits("GB", longer) + longer));
  const std::string unknown = "12345678";
  EXPECT_FALSE(iban_valid("XK" + iban_check_digits("XK", unknown) + unknown));
}

TEST(IbanTest, PythonQuirksStdnumAccepts) {
  // Surrounding Unicode whitespace, look-alike dashes, lowercase.
  EXPECT_TRUE(iban_valid("\u00A0GB82 WEST 1234 5698 7654 32\u3000"));
  EXPECT_TRUE(iban_valid("gb82\u2013west\u20131234\u20135698\u20137654\u201332"));
  EXPECT_TRUE(iban_valid("GB82WEST\uFF11\uFF12345698765432"));  // fullwidth digits
  // Check digits are read by int(c, 36): any script's decimal digits, letters.
  EXPECT_TRUE(iban_valid("GB\u0668\u0662WEST12345698765432"));
  EXPECT_TRUE(iban_valid("GBAKWEST12345698765432"));
  // str.upper() makes ß, ſ and the ligatures ASCII.
  EXPECT_TRUE(iban_valid("GB58we\u00DF12345698765432"));
  EXPECT_TRUE(iban_valid("GB18\uFB01\u017Ft12345698765432"));
  EXPECT_EQ(iban_compact("gb58we\u00DF 1234"), "GB58WESS1234");
  // Decimal digits other than ASCII are no BBAN digits.
  EXPECT_FALSE(iban_valid("GB82WEST\u0661\u066212345698765432"));
}

TEST(IbanTest, HugeInputs) {
  EXPECT_FALSE(iban_valid(std::string(1'000'000, '9')));
  EXPECT_FALSE(iban_valid("GB82WEST12345698765432" + std::string(1'000'000, ' ') + "1"));
  EXPECT_TRUE(iban_valid(std::string(100'000, ' ') + "GB82WEST12345698765432"));
}

TEST(IbanTest, CheckDigitsRejectOtherCharacters) {
  EXPECT_THROW(iban_check_digits("G-", "123"), InternalError);
  EXPECT_THROW(iban_check_digits("GB", "12 3"), InternalError);
  EXPECT_EQ(iban_check_digits("gb", "west12345698765432"), "82");
}

}  // namespace
}  // namespace nss::pii
