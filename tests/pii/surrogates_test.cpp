// Surrogates: valid values of the same entity and shape (checked with the
// validators), consistent for a value however it is written, across maps
// with one key and not across keys, one-to-one within a table, never the
// original; states permuted without a fixed point.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <set>

#include <gtest/gtest.h>

#include "pii/canonical.h"
#include "pii/checksums.h"
#include "pii/dates.h"
#include "pii/iban.h"
#include "pii/network.h"
#include "pii/surrogate_map.h"

namespace nss::pii {
namespace {

WordLists small_lists() {
  WordLists lists;
  lists.first_names_female = {{"Mary", 0.6}, {"Anne", 0.4}};
  lists.first_names_male = {{"John", 0.7}, {"Omar", 0.3}};
  lists.last_names = {{"Smith", 0.5}, {"Garcia", 0.3}, {"Nguyen", 0.2}};
  lists.street_suffixes = {{"Street", 1}, {"Avenue", 1}, {"Way", 1}};
  lists.city_prefixes = {{"North", 1}, {"Lake", 1}};
  lists.city_suffixes = {{"ville", 1}, {"port", 1}};
  lists.states = {{"Alabama", 1}, {"Alaska", 1}, {"Arizona", 1}, {"Ohio", 1}, {"Texas", 1}};
  lists.states_abbr = {{"AL", 1}, {"AK", 1}, {"AZ", 1}, {"OH", 1}, {"TX", 1}};
  return lists;
}

PiiKey key(char last = '1') {
  std::string hex(64, 'a');
  hex.back() = last;
  return PiiKey::from_hex(hex, "test");
}

std::string digits_of(std::uint64_t n, int width) {
  char text[32];
  std::snprintf(text, sizeof text, "%0*llu", width, static_cast<unsigned long long>(n));
  return text;
}

std::string shape(const std::string& text) {
  std::string out = text;
  for (char& c : out)
    if (c >= '0' && c <= '9') c = '#';
  return out;
}

class SurrogateTest : public ::testing::Test {
 protected:
  WordLists lists = small_lists();
  PiiKey k = key();
  SurrogateMap map{k, lists};
};

TEST_F(SurrogateTest, CardsAreLuhnValidOfTheSameBrandAndLayout) {
  std::set<std::string> seen;
  for (std::uint64_t i = 0; i < 2000; ++i) {
    std::string body = "4" + digits_of(i * 7919 + 12345, 14);
    const std::string number = body + luhn_check_digit(body);
    const std::string original = number.substr(0, 4) + " " + number.substr(4, 4) + " " +
                                 number.substr(8, 4) + " " + number.substr(12);
    const std::string out = map.surrogate(Entity::kCreditDebitCard, original);
    const std::string out_digits = canonical_value(Entity::kCreditDebitCard, out);
    EXPECT_EQ(shape(out), shape(original));
    EXPECT_TRUE(luhn_valid(out_digits)) << out;
    EXPECT_EQ(card_brand(out_digits), card_brand(number)) << out;
    EXPECT_NE(out_digits, number);
    EXPECT_TRUE(seen.insert(out_digits).second) << "one-to-one: " << out;
  }
  const std::string amex = "378282246310005";
  const std::string out = map.surrogate(Entity::kCreditDebitCard, amex);
  EXPECT_EQ(out.size(), 15u);
  EXPECT_EQ(card_brand(out), CardBrand::kAmex);
  const std::string malformed = map.surrogate(Entity::kCreditDebitCard, "not a card");
  EXPECT_EQ(shape(malformed), "#### #### #### ####");  // Visa's layout
  EXPECT_TRUE(luhn_valid(canonical_value(Entity::kCreditDebitCard, malformed)));
}

TEST_F(SurrogateTest, IdentifiersStayValid) {
  for (int i = 0; i < 500; ++i) {
    const std::string ssn = map.surrogate(Entity::kSsn, digits_of(123450000 + i * 37, 9));
    EXPECT_TRUE(ssn_valid(ssn)) << ssn;
    EXPECT_EQ(ssn.size(), 9u);
    const std::string dashed = digits_of(200 + i, 3) + "-45-" + digits_of(1000 + i, 4);
    const std::string itin = map.surrogate(Entity::kTaxId, dashed);
    EXPECT_TRUE(itin_valid(itin)) << itin;
    EXPECT_EQ(shape(itin), "###-##-####");
    const std::string phone = map.surrogate(Entity::kPhoneNumber, "(415) 555-" + digits_of(i, 4));
    EXPECT_EQ(shape(phone), "(###) ###-####");
    EXPECT_TRUE(nanp_valid(canonical_value(Entity::kPhoneNumber, phone))) << phone;
    const std::string plus = map.surrogate(Entity::kPhoneNumber, "+1 415 555 " + digits_of(i, 4));
    EXPECT_EQ(plus.substr(0, 3), "+1 ");
    const std::string zip = map.surrogate(Entity::kPostcode, digits_of(10000 + i, 5) + "-1234");
    EXPECT_EQ(shape(zip), "#####-####");
  }
}

TEST_F(SurrogateTest, IbansOfTheSameCountryPassMod97) {
  const char* const originals[] = {"DE89 3704 0044 0532 0130 00", "GB29NWBK60161331926819",
                                   "FR1420041010050500013M02606", "NL91ABNA0417164300"};
  for (const char* original : originals) {
    const std::string out = map.surrogate(Entity::kIban, original);
    EXPECT_TRUE(iban_valid(out)) << out;
    EXPECT_EQ(out.substr(0, 2), std::string(original).substr(0, 2));
    EXPECT_EQ(out.size(), std::string(original).size());
    EXPECT_NE(iban_compact(out), iban_compact(original));
  }
}

TEST_F(SurrogateTest, NetworkAddressesAreReservedOnes) {
  const std::string ip = map.surrogate(Entity::kIpv4, "192.168.1.20");
  EXPECT_TRUE(ipv4_valid(ip, false)) << ip;
  EXPECT_EQ(ip.substr(0, 3), "10.");
  const std::string ip6 = map.surrogate(Entity::kIpv6, "2001:db8::1");
  EXPECT_TRUE(ipv6_valid(ip6, false)) << ip6;
  EXPECT_EQ(ip6.substr(0, 2), "fd");
  const std::string mac = map.surrogate(Entity::kMacAddress, "00-1A-2B-3C-4D-5E");
  EXPECT_TRUE(mac_valid(mac)) << mac;
  EXPECT_EQ(mac[2], '-');
  EXPECT_EQ(std::stoi(mac.substr(0, 2), nullptr, 16) & 3, 2) << "locally administered unicast";
  const std::string email = map.surrogate(Entity::kEmail, "Jane.Doe@corp.com");
  EXPECT_NE(email.find("@example."), std::string::npos) << email;
}

TEST_F(SurrogateTest, NamesKeepTheirStyleAndComeFromTheLists) {
  const std::string upper = map.surrogate(Entity::kLastName, "DOE");
  EXPECT_TRUE(upper == "SMITH" || upper == "GARCIA" || upper == "NGUYEN") << upper;
  const std::string name = map.surrogate(Entity::kName, "Dr. Jane Doe");
  EXPECT_EQ(name.substr(0, 4), "Dr. ");
  const std::string reversed = map.surrogate(Entity::kName, "Doe, Jane");
  EXPECT_NE(reversed.find(", "), std::string::npos);
  const std::string street = map.surrogate(Entity::kStreetAddress, "1234 Main St Apt 5");
  EXPECT_EQ(shape(street.substr(0, 5)), "#### ");
  EXPECT_NE(street.find(" Apt. "), std::string::npos) << street;
}

TEST_F(SurrogateTest, UuidsAreFreshVersion4InTheOriginalsCaseAndLayout) {
  const std::string lower = map.surrogate(Entity::kUuid, "123e4567-e89b-12d3-a456-426614174000");
  EXPECT_EQ(lower.size(), 36u);
  EXPECT_EQ(lower[14], '4') << lower;
  EXPECT_NE(std::string("89ab").find(lower[19]), std::string::npos) << lower;
  EXPECT_EQ(shape(lower.substr(0, 9)).back(), '-');
  for (const char c : lower) EXPECT_FALSE(c >= 'A' && c <= 'F') << lower;
  const std::string upper = map.surrogate(Entity::kUuid, "{123E4567E89B12D3A456426614174000}");
  EXPECT_EQ(upper.size(), 34u);
  EXPECT_EQ(upper.front(), '{');
  EXPECT_EQ(upper[13], '4') << upper;
  for (const char c : upper) EXPECT_FALSE(c >= 'a' && c <= 'f') << upper;
}

TEST_F(SurrogateTest, UrlsAreOnExampleComWithTheSameNumberOfSegments) {
  EXPECT_EQ(map.surrogate(Entity::kUrl, "http://www.acme.io"), "https://example.com/");
  const std::string two = map.surrogate(Entity::kUrl, "https://shop.acme.io/users/jdoe?tab=1");
  ASSERT_EQ(two.rfind("https://example.com/", 0), 0u) << two;
  const std::string path = two.substr(20);
  EXPECT_EQ(std::count(path.begin(), path.end(), '/'), 1) << two;
  EXPECT_EQ(path.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789/"), std::string::npos);
}

TEST_F(SurrogateTest, DatesOfBirthMoveWithinThreeYearsWrittenTheSameWay) {
  const char* const originals[] = {"1984-02-29", "03/15/1990", "15.03.1990",
                                   "3/5/84",     "2001/12/31", "31-12-1999"};
  for (const char* original : originals) {
    for (char last = '0'; last <= '9'; ++last) {
      const PiiKey other = key(last);
      SurrogateMap fresh(other, lists);
      const std::string out = fresh.surrogate(Entity::kDateOfBirth, original);
      const auto read_in = read_date(original);
      const auto read_out = read_date(out);
      ASSERT_TRUE(read_in && read_out) << original << " -> " << out;
      EXPECT_NE(out, original);
      if (std::string(original) != "3/5/84") {  // unpadded fields may grow: 3/5 -> 12/25
        EXPECT_EQ(shape(out), shape(original)) << original << " -> " << out;
      }
      const long shift = days_from_civil(read_out->date) - days_from_civil(read_in->date);
      EXPECT_TRUE(shift != 0 && shift >= -3 * 365 && shift <= 3 * 365) << original << " -> " << out;
    }
  }
}

TEST_F(SurrogateTest, PassportAndLicenceNumbersKeepTheirFormat) {
  for (const Entity entity : {Entity::kPassportNumber, Entity::kDriversLicense}) {
    const std::string out = map.surrogate(entity, "X12-345 ab7");
    ASSERT_EQ(out.size(), 11u);
    EXPECT_TRUE(out[0] >= 'A' && out[0] <= 'Z') << out;
    EXPECT_EQ(shape(out).substr(1, 7), "##-### ") << out;
    EXPECT_TRUE(out[8] >= 'a' && out[8] <= 'z' && out[9] >= 'a' && out[9] <= 'z') << out;
    EXPECT_TRUE(out[10] >= '0' && out[10] <= '9') << out;
    EXPECT_NE(canonical_value(entity, out), "X12345AB7");
  }
}

TEST_F(SurrogateTest, ConsistentForAValueAndAKeyOnly) {
  const std::string a = map.surrogate(Entity::kPhoneNumber, "415-555-0134");
  EXPECT_EQ(
      canonical_value(Entity::kPhoneNumber, map.surrogate(Entity::kPhoneNumber, "(415) 555 0134")),
      canonical_value(Entity::kPhoneNumber, a));
  EXPECT_EQ(map.surrogate(Entity::kEmail, " JANE@x.org"),
            map.surrogate(Entity::kEmail, "jane@x.org"));
  SurrogateMap again(k, lists);
  EXPECT_EQ(again.surrogate(Entity::kPhoneNumber, "415-555-0134"), a);
  const PiiKey other_key = key('2');
  SurrogateMap other(other_key, lists);
  EXPECT_NE(other.surrogate(Entity::kPhoneNumber, "415-555-0134"), a);
  EXPECT_EQ(map.counts().at(Entity::kPhoneNumber).distinct, 1u);
}

TEST_F(SurrogateTest, StatesArePermutedWithoutAFixedPoint) {
  std::set<std::string> images;
  for (const auto& state : lists.states) {
    const std::string out = map.surrogate(Entity::kState, state.word);
    EXPECT_NE(out, state.word);
    images.insert(out);
  }
  EXPECT_EQ(images.size(), lists.states.size());
  EXPECT_EQ(map.surrogate(Entity::kState, "ohio").size() > 0, true);
  EXPECT_EQ(map.counts().at(Entity::kState).collisions_kept, 0u);
}

TEST_F(SurrogateTest, ASmallVocabularyKeepsCollisionsAndCountsThem) {
  // 3 last names: a fourth distinct value cannot get a surrogate of its own.
  for (const char* name : {"Adams", "Baker", "Clark", "Davis"})
    map.surrogate(Entity::kLastName, name);
  const auto& counts = map.counts().at(Entity::kLastName);
  EXPECT_EQ(counts.distinct, 4u);
  EXPECT_GE(counts.collisions_kept, 1u);
}

TEST(SurrogateWords, ComeFromDebiansFaker) {
  const std::string dir = faker_dir();
  if (!std::filesystem::exists(dir + "/providers/person/en_US/__init__.py"))
    GTEST_SKIP() << "python3-fake-factory is not installed (" << dir << ")";
  const WordLists lists = load_word_lists(dir);
  std::set<std::string> firsts, lasts;
  for (const auto* words : {&lists.first_names_female, &lists.first_names_male})
    for (const auto& w : *words) firsts.insert(w.word);
  for (const auto& w : lists.last_names) lasts.insert(w.word);
  const PiiKey k = key();
  SurrogateMap map(k, lists);
  for (int i = 0; i < 300; ++i) {
    const std::string name = map.surrogate(Entity::kName, "Person Number" + std::to_string(i));
    const std::size_t space = name.find(' ');
    EXPECT_TRUE(firsts.count(name.substr(0, space))) << name;
    EXPECT_TRUE(lasts.count(name.substr(space + 1))) << name;
  }
  EXPECT_EQ(map.counts().at(Entity::kName).collisions_kept, 0u);
}

}  // namespace
}  // namespace nss::pii
