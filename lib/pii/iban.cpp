#include "pii/iban.h"

#include <algorithm>
#include <utility>

#include "core/error.h"
#include "core/utf8.h"
#include "pii/unicode_clean.h"

namespace nss::pii {
namespace {

// python-stdnum 1.18's stdnum/iban.dat (SWIFT's IBAN registry), in its order.
constexpr std::pair<std::string_view, std::string_view> kRegistry[] = {
    {"AD", "4!n4!n12!c"},       {"AE", "3!n16!n"},
    {"AL", "8!n16!c"},          {"AT", "5!n11!n"},
    {"AZ", "4!a20!c"},          {"BA", "3!n3!n8!n2!n"},
    {"BE", "3!n7!n2!n"},        {"BG", "4!a4!n2!n8!c"},
    {"BH", "4!a14!c"},          {"BI", "5!n5!n11!n2!n"},
    {"BR", "8!n5!n10!n1!a1!c"}, {"BY", "4!c4!n16!c"},
    {"CH", "5!n12!c"},          {"CR", "4!n14!n"},
    {"CY", "3!n5!n16!c"},       {"CZ", "4!n6!n10!n"},
    {"DE", "8!n10!n"},          {"DJ", "5!n5!n11!n2!n"},
    {"DK", "4!n9!n1!n"},        {"DO", "4!c20!n"},
    {"EE", "2!n2!n11!n1!n"},    {"EG", "4!n4!n17!n"},
    {"ES", "4!n4!n1!n1!n10!n"}, {"FI", "3!n11!n"},
    {"FO", "4!n9!n1!n"},        {"FR", "5!n5!n11!c2!n"},
    {"GB", "4!a6!n8!n"},        {"GE", "2!a16!n"},
    {"GI", "4!a15!c"},          {"GL", "4!n9!n1!n"},
    {"GR", "3!n4!n16!c"},       {"GT", "4!c20!c"},
    {"HR", "7!n10!n"},          {"HU", "3!n4!n1!n15!n1!n"},
    {"IE", "4!a6!n8!n"},        {"IL", "3!n3!n13!n"},
    {"IQ", "4!a3!n12!n"},       {"IS", "4!n2!n6!n10!n"},
    {"IT", "1!a5!n5!n12!c"},    {"JO", "4!a4!n18!c"},
    {"KW", "4!a22!c"},          {"KZ", "3!n13!c"},
    {"LB", "4!n20!c"},          {"LC", "4!a24!c"},
    {"LI", "5!n12!c"},          {"LT", "5!n11!n"},
    {"LU", "3!n13!c"},          {"LV", "4!a13!c"},
    {"LY", "3!n3!n15!n"},       {"MC", "5!n5!n11!c2!n"},
    {"MD", "2!c18!c"},          {"ME", "3!n13!n2!n"},
    {"MK", "3!n10!c2!n"},       {"MR", "5!n5!n11!n2!n"},
    {"MT", "4!a5!n18!c"},       {"MU", "4!a2!n2!n12!n3!n3!a"},
    {"NL", "4!a10!n"},          {"NO", "4!n6!n1!n"},
    {"PK", "4!a16!c"},          {"PL", "8!n16!n"},
    {"PS", "4!a21!c"},          {"PT", "4!n4!n11!n2!n"},
    {"QA", "4!a21!c"},          {"RO", "4!a16!c"},
    {"RS", "3!n13!n2!n"},       {"RU", "9!n5!n15!c"},
    {"SA", "2!n18!c"},          {"SC", "4!a2!n2!n16!n3!a"},
    {"SD", "2!n12!n"},          {"SE", "3!n16!n1!n"},
    {"SI", "5!n8!n2!n"},        {"SK", "4!n6!n10!n"},
    {"SM", "1!a5!n5!n12!c"},    {"ST", "4!n4!n11!n2!n"},
    {"SV", "4!a20!n"},          {"TL", "3!n14!n2!n"},
    {"TN", "2!n3!n13!n2!n"},    {"TR", "5!n1!n16!c"},
    {"UA", "6!n19!c"},          {"VA", "3!n15!n"},
    {"VG", "4!a16!n"},          {"XK", "4!n10!n2!n"},
};

// "8!n10!n" -> {8, digits}, {10, digits}.
IbanCountry parse_country(std::string_view code, std::string_view structure) {
  IbanCountry country{code, structure, {}, 0};
  std::size_t pos = 0;
  while (pos < structure.size()) {
    int count = 0;
    while (pos < structure.size() && structure[pos] >= '0' && structure[pos] <= '9') {
      count = count * 10 + (structure[pos++] - '0');
    }
    NSS_ASSERT(count > 0 && pos + 1 < structure.size() && structure[pos] == '!', "pii",
               "IBAN structure " + std::string(structure));
    const char kind = structure[pos + 1];
    NSS_ASSERT(kind == 'n' || kind == 'a' || kind == 'c', "pii",
               "IBAN structure " + std::string(structure));
    country.fields.push_back({count, kind == 'n'   ? BbanCharacters::kDigits
                                     : kind == 'a' ? BbanCharacters::kUppercase
                                                   : BbanCharacters::kAlphanumeric});
    country.bban_length += count;
    pos += 2;
  }
  return country;
}

bool is_upper(char32_t c) {
  return c >= 'A' && c <= 'Z';
}
bool is_lower(char32_t c) {
  return c >= 'a' && c <= 'z';
}
bool is_digit(char32_t c) {
  return c >= '0' && c <= '9';
}

bool fits(char32_t c, BbanCharacters characters) {
  switch (characters) {
    case BbanCharacters::kDigits:
      return is_digit(c);
    case BbanCharacters::kUppercase:
      return is_upper(c);
    case BbanCharacters::kAlphanumeric:
      return is_digit(c) || is_upper(c) || is_lower(c);
  }
  return false;
}

bool bban_fits(std::u32string_view bban, const IbanCountry& country) {
  if (bban.size() != country.bban_length) return false;
  std::size_t pos = 0;
  for (const BbanField& field : country.fields) {
    for (int i = 0; i < field.count; ++i) {
      if (!fits(bban[pos++], field.characters)) return false;
    }
  }
  return true;
}

// One character into a running mod 97 of the number stdnum's mod_97_10
// writes down: int(c, 36) of each character, in decimal, concatenated.
// False for a character int(c, 36) rejects.
bool add_mod97(char32_t c, int& remainder) {
  int value = -1;
  if (is_upper(c)) {
    value = static_cast<int>(c - 'A') + 10;
  } else if (is_lower(c)) {
    value = static_cast<int>(c - 'a') + 10;
  } else {
    value = python_decimal_value(c);
  }
  if (value < 0) return false;
  remainder = (remainder * (value >= 10 ? 100 : 10) + value) % 97;
  return true;
}

bool is_alphanumeric(std::string_view text) {
  return std::all_of(text.begin(), text.end(), [](char c) {
    return is_digit(static_cast<unsigned char>(c)) || is_upper(static_cast<unsigned char>(c)) ||
           is_lower(static_cast<unsigned char>(c));
  });
}

}  // namespace

const std::vector<IbanCountry>& iban_countries() {
  static const std::vector<IbanCountry> countries = [] {
    std::vector<IbanCountry> out;
    for (const auto& [code, structure] : kRegistry) out.push_back(parse_country(code, structure));
    return out;
  }();
  return countries;
}

const IbanCountry* iban_country(std::string_view code) {
  const std::vector<IbanCountry>& countries = iban_countries();
  const auto it = std::lower_bound(
      countries.begin(), countries.end(), code,
      [](const IbanCountry& country, std::string_view key) { return country.code < key; });
  return it != countries.end() && it->code == code ? &*it : nullptr;
}

std::string iban_compact(std::string_view text) {
  return python_upper_ascii(python_strip(stdnum_clean(text, " -.")));
}

bool iban_valid(std::string_view text) {
  if (!is_valid_utf8(text)) return false;
  const std::u32string number = decode_utf8_lossy(iban_compact(text));
  if (number.empty()) return false;
  // stdnum checks number[4:] + number[:4], which is the number itself when
  // it is shorter than 4.
  const std::size_t start = number.size() >= 4 ? 4 : 0;
  int remainder = 0;
  for (std::size_t i = 0; i < number.size(); ++i) {
    if (!add_mod97(number[(start + i) % number.size()], remainder)) return false;
  }
  if (remainder != 1 || number.size() < 4) return false;
  if (!is_upper(number[0]) || !is_upper(number[1])) return false;
  const char code[2] = {static_cast<char>(number[0]), static_cast<char>(number[1])};
  const IbanCountry* country = iban_country(std::string_view(code, 2));
  return country != nullptr && bban_fits(std::u32string_view(number).substr(4), *country);
}

std::string iban_check_digits(std::string_view country, std::string_view bban) {
  NSS_ASSERT(is_alphanumeric(country) && is_alphanumeric(bban), "pii",
             "IBAN check digits of ASCII letters and digits");
  int remainder = 0;
  for (std::string_view part : {bban, country, std::string_view("00")}) {
    for (char c : part) add_mod97(static_cast<unsigned char>(c), remainder);
  }
  const int check = 98 - remainder;
  return {static_cast<char>('0' + check / 10), static_cast<char>('0' + check % 10)};
}

}  // namespace nss::pii
