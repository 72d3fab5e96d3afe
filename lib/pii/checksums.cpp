#include "pii/checksums.h"

#include <cstdint>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/utf8.h"
#include "pii/ascii_text.h"
#include "pii/unicode_clean.h"

namespace nss::pii {
namespace {

bool all_digits(std::string_view text) {
  for (char c : text) {
    if (!is_ascii_digit(c)) return false;
  }
  return true;
}

// stdnum's luhn.checksum over ASCII digits: the digits from the right, every
// second one doubled and its two digits added.
int luhn_checksum(std::string_view digits) {
  int sum = 0;
  bool doubled = false;
  for (auto it = digits.rbegin(); it != digits.rend(); ++it) {
    const int d = *it - '0';
    sum += doubled ? (2 * d) / 10 + (2 * d) % 10 : d;
    sum %= 10;
    doubled = !doubled;
  }
  return sum;
}

// stdnum's compact(): clean(text, deletechars).strip(); empty for text that
// is not UTF-8 (no validator accepts an empty number).
std::string cleaned_and_stripped(std::string_view text, std::string_view deletechars) {
  if (!is_valid_utf8(text)) return {};
  return std::string(python_strip(stdnum_clean(text, deletechars)));
}

// The nine digits of stdnum's SSN and ITIN shape,
// ^([0-9]{3})-?([0-9]{2})-?([0-9]{4})$ on clean(text).strip(), or "".
std::string us_tin_digits(std::string_view text) {
  const std::string number = cleaned_and_stripped(text, "");
  std::string digits;
  std::size_t pos = 0;
  for (int run : {3, 2, 4}) {
    const bool hyphen_may_precede = run != 3;
    if (hyphen_may_precede && pos < number.size() && number[pos] == '-') ++pos;
    for (int i = 0; i < run; ++i, ++pos) {
      if (pos >= number.size() || !is_ascii_digit(number[pos])) return {};
      digits.push_back(number[pos]);
    }
  }
  return pos == number.size() ? digits : std::string();
}

bool itin_group_allowed(std::string_view digits, bool presidio_groups) {
  const int group = (digits[3] - '0') * 10 + (digits[4] - '0');
  if (group >= 70 && group <= 99) return group != 89 && group != 93;
  return presidio_groups && group >= 50 && group <= 65;
}

bool itin_check(std::string_view text, bool presidio_groups) {
  const std::string digits = us_tin_digits(text);
  return !digits.empty() && digits[0] == '9' && itin_group_allowed(digits, presidio_groups);
}

struct PrefixRange {
  std::uint32_t low, high;  // prefixes of equal length, inclusive
  int length;
};

struct BrandRule {
  CardBrand brand;
  std::vector<PrefixRange> prefixes;
  std::vector<int> lengths;
};

// Issuer prefixes and lengths: Faker's card prefixes and the public IIN ranges.
// The first rule whose prefix and length both fit names the brand.
const std::vector<BrandRule>& brand_rules() {
  static const std::vector<BrandRule> rules = {
      {CardBrand::kVisa, {{4, 4, 1}}, {13, 16, 19}},
      {CardBrand::kMastercard, {{51, 55, 2}, {2221, 2720, 4}}, {16}},
      {CardBrand::kAmex, {{34, 34, 2}, {37, 37, 2}}, {15}},
      {CardBrand::kDiscover,
       {{6011, 6011, 4}, {622126, 622925, 6}, {644, 649, 3}, {65, 65, 2}},
       {16, 17, 18, 19}},
      {CardBrand::kDiners,
       {{300, 305, 3}, {3095, 3095, 4}, {36, 36, 2}, {38, 39, 2}},
       {14, 15, 16, 17, 18, 19}},
      {CardBrand::kJcb, {{3528, 3589, 4}}, {16, 17, 18, 19}},
      {CardBrand::kJcb, {{2131, 2131, 4}, {1800, 1800, 4}}, {15}},  // Faker's jcb15
      {CardBrand::kUnionPay, {{62, 62, 2}}, {16, 17, 18, 19}},
      {CardBrand::kMaestro,
       {{5018, 5018, 4},
        {5020, 5020, 4},
        {5038, 5038, 4},
        {56, 58, 2},
        {6304, 6304, 4},
        {6759, 6759, 4},
        {6761, 6763, 4},
        {604, 604, 4},  // 0604
        {6390, 6390, 4}},
       {12, 13, 14, 15, 16, 17, 18, 19}},
  };
  return rules;
}

bool prefix_fits(std::string_view digits, const PrefixRange& range) {
  if (digits.size() < static_cast<std::size_t>(range.length)) return false;
  std::uint32_t prefix = 0;
  for (int i = 0; i < range.length; ++i) prefix = prefix * 10 + (digits[i] - '0');
  return prefix >= range.low && prefix <= range.high;
}

bool nanp_block_valid(std::string_view three) {
  return three[0] >= '2' && !(three[1] == '1' && three[2] == '1');
}

}  // namespace

bool luhn_valid(std::string_view text) {
  return !text.empty() && all_digits(text) && luhn_checksum(text) == 0;
}

char luhn_check_digit(std::string_view digits) {
  NSS_ASSERT(all_digits(digits), "pii", "luhn_check_digit takes ASCII digits");
  const int checksum = luhn_checksum(std::string(digits) + '0');
  return static_cast<char>('0' + (10 - checksum) % 10);
}

bool ssn_valid(std::string_view text) {
  const std::string digits = us_tin_digits(text);
  if (digits.empty()) return false;
  const std::string_view area = std::string_view(digits).substr(0, 3);
  if (area == "000" || area == "666" || area[0] == '9') return false;
  if (digits.compare(3, 2, "00") == 0 || digits.compare(5, 4, "0000") == 0) return false;
  // stdnum compares its format() of the raw text with the advertised
  // numbers; format() adds the hyphens only to a 9-character text, so padded
  // or other-dash forms pass.
  for (std::string_view advertised :
       {"078-05-1120", "457-55-5462", "219-09-9999", "078051120", "457555462", "219099999"}) {
    if (text == advertised) return false;
  }
  return true;
}

bool itin_valid(std::string_view text) {
  return itin_check(text, false);
}

bool itin_plausible(std::string_view text) {
  return itin_check(text, true);
}

bool aba_valid(std::string_view text) {
  const std::string number = cleaned_and_stripped(text, "");
  if (number.size() != 9 || !all_digits(number)) return false;
  int d[9];
  for (int i = 0; i < 9; ++i) d[i] = number[i] - '0';
  const int check = (7 * (d[0] + d[3] + d[6]) + 3 * (d[1] + d[4] + d[7]) + 9 * (d[2] + d[5])) % 10;
  return check == d[8];
}

bool nhs_valid(std::string_view text) {
  const std::string number = cleaned_and_stripped(text, " -");
  if (number.size() != 10 || !all_digits(number)) return false;
  int sum = 0;
  for (int i = 0; i < 10; ++i) sum += (10 - i) * (number[i] - '0');
  return sum % 11 == 0;
}

bool nanp_valid(std::string_view digits10) {
  return digits10.size() == 10 && all_digits(digits10) && nanp_block_valid(digits10.substr(0, 3)) &&
         nanp_block_valid(digits10.substr(3, 3));
}

std::optional<CardBrand> card_brand(std::string_view digits) {
  if (!all_digits(digits)) return std::nullopt;
  for (const BrandRule& rule : brand_rules()) {
    bool length_fits = false;
    for (int length : rule.lengths)
      length_fits |= digits.size() == static_cast<std::size_t>(length);
    if (!length_fits) continue;
    for (const PrefixRange& range : rule.prefixes) {
      if (prefix_fits(digits, range)) return rule.brand;
    }
  }
  return std::nullopt;
}

}  // namespace nss::pii
