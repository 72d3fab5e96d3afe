#include "pii/canonical.h"

#include <cctype>

#include "pii/iban.h"

namespace nss::pii {
namespace {

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

char ascii_lower(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

std::string kept(std::string_view value, bool (*keep)(char), char (*map)(char)) {
  std::string out;
  for (const char c : value)
    if (keep(c)) out.push_back(map(c));
  return out;
}

// Trimmed, whitespace runs as one space, ASCII-lowercased.
std::string normalised_text(std::string_view value) {
  std::string out;
  bool space = false;
  for (const char c : value) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      space = !out.empty();
      continue;
    }
    if (space) out.push_back(' ');
    space = false;
    out.push_back(ascii_lower(c));
  }
  return out;
}

std::string phone_digits(std::string_view value) {
  std::string digits = kept(value, is_digit, [](char c) { return c; });
  if (digits.size() == 11 && digits[0] == '1') digits.erase(0, 1);
  return digits;
}

}  // namespace

std::string canonical_value(Entity entity, std::string_view value) {
  switch (entity) {
    case Entity::kPhoneNumber:
    case Entity::kFaxNumber:
      return phone_digits(value);
    case Entity::kSsn:
    case Entity::kNationalId:
    case Entity::kTaxId:
      return kept(
          value, [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; },
          [](char c) { return static_cast<char>(std::toupper(static_cast<unsigned char>(c))); });
    case Entity::kCreditDebitCard:
    case Entity::kPostcode:
      return kept(value, is_digit, [](char c) { return c; });
    case Entity::kIban:
      return iban_compact(value);
    case Entity::kMacAddress:
      return kept(
          value, [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; },
          ascii_lower);
    default:
      return normalised_text(value);
  }
}

}  // namespace nss::pii
