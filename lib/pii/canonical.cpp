#include "pii/canonical.h"

#include <algorithm>
#include <cctype>

#include "pii/ascii_text.h"
#include "pii/dates.h"
#include "pii/iban.h"

namespace nss::pii {
namespace {

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
  std::string digits = ascii_digits(value);
  if (digits.size() == 11 && digits[0] == '1') digits.erase(0, 1);
  return digits;
}

std::string upper_alphanumerics(std::string_view value) {
  return kept(
      value, [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; },
      [](char c) { return static_cast<char>(std::toupper(static_cast<unsigned char>(c))); });
}

// The scheme and host are case-insensitive, the rest of a URL is not.
std::string url_form(std::string_view value) {
  std::string out;
  const auto first = value.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return out;
  value = value.substr(first, value.find_last_not_of(" \t\r\n") - first + 1);
  const auto scheme = value.find("://");
  const auto host_begin = scheme == std::string_view::npos ? 0 : scheme + 3;
  const auto host_end = std::min(value.find_first_of("/?#", host_begin), value.size());
  for (std::size_t i = 0; i < value.size(); ++i)
    out.push_back(i < host_end ? ascii_lower(value[i]) : value[i]);
  return out;
}

std::string date_form(std::string_view value) {
  const auto written = read_date(value);
  if (!written) return normalised_text(value);
  WrittenDate iso;
  return write_date(written->date, iso);
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
    case Entity::kPassportNumber:
    case Entity::kDriversLicense:
      return upper_alphanumerics(value);
    case Entity::kCreditDebitCard:
    case Entity::kPostcode:
      return ascii_digits(value);
    case Entity::kIban:
      return iban_compact(value);
    case Entity::kMacAddress:
    case Entity::kUuid:
      return kept(
          value, [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; },
          ascii_lower);
    case Entity::kUrl:
      return url_form(value);
    case Entity::kDateOfBirth:
      return date_form(value);
    case Entity::kFirstName:
    case Entity::kLastName:
    case Entity::kName:
    case Entity::kStreetAddress:
    case Entity::kCity:
    case Entity::kState:
    case Entity::kAddress:
    case Entity::kEmail:
    case Entity::kIpv4:
    case Entity::kIpv6:
      return normalised_text(value);
  }
  return normalised_text(value);
}

}  // namespace nss::pii
