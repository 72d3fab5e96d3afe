// IBANs: the registry of countries and their BBAN structures (python-stdnum
// 1.18's iban.dat, 82 countries), validation as stdnum.iban.is_valid(...,
// check_country=False) gives it, and check digits for a new number.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace nss::pii {

/// A BBAN field's characters: n, a or c in SWIFT's notation.
enum class BbanCharacters { kDigits, kUppercase, kAlphanumeric };

/// `count` characters of one kind ("8!n" is {8, kDigits}).
struct BbanField {
  int count;
  BbanCharacters characters;
};

struct IbanCountry {
  std::string_view code;       // "DE"
  std::string_view structure;  // "8!n10!n", as the registry writes it
  std::vector<BbanField> fields;
  std::size_t bban_length = 0;  // the IBAN is 4 characters longer
};

/// Every country of the registry, by code.
const std::vector<IbanCountry>& iban_countries();

/// The registry's entry for a two-letter code, or nullptr.
const IbanCountry* iban_country(std::string_view code);

/// stdnum's iban.compact: stdnum_clean without spaces, hyphens and full
/// stops, stripped, uppercased (python_upper_ascii).
std::string iban_compact(std::string_view text);

/// stdnum.iban.is_valid(text, check_country=False): on the compact form,
/// ISO 7064 mod 97-10 over the BBAN, country and check digits equals 1
/// (letters count 10–35; like Python's int() the check digits may be
/// decimal digits of any script), the country is in the registry and the
/// BBAN has exactly its structure. No national check digits.
bool iban_valid(std::string_view text);

/// The two check digits of the IBAN of `country` and `bban` (ASCII letters
/// and digits; InternalError otherwise): stdnum's calc_check_digits.
std::string iban_check_digits(std::string_view country, std::string_view bban);

}  // namespace nss::pii
