#include "pii/recognizers.h"

#include <algorithm>
#include <cctype>

#include "pii/ascii_text.h"
#include "pii/checksums.h"
#include "pii/dates.h"
#include "pii/iban.h"
#include "pii/network.h"
#include "pii/public_suffix.h"

namespace nss::pii {
namespace {

std::string_view text_of(const ScanContext& scan, std::size_t begin, std::size_t end) {
  return scan.cell.substr(begin, end - begin);
}

bool group_set(const Match& match, std::size_t group) {
  return group < match.groups.size() && match.groups[group].first >= 0;
}

// Context words before the span, or the column's header.
bool context_before(const Match& match, const ScanContext& scan, const ContextTerms& terms) {
  return has_context(words_before(scan.cell, match.begin), scan.header_tokens, terms);
}

Detection detected(const Match& match, Entity entity, double score) {
  return {match.begin, match.end, entity, score};
}

const ContextTerms kCardTerms = {"credit", "card",     "visa",    "mastercard",  "cc",
                                 "amex",   "discover", "jcb",     "diners",      "maestro",
                                 "debit",  "cc#",      "payment", "paid",        "kreditkarte",
                                 "karte",  "tarjeta",  "carte",   "instapayment"};
const ContextTerms kItinTerms = {"individual", "taxpayer", "itin", "tax", "payer", "taxid", "tin"};
const ContextTerms kSsnTerms = {"social", "security", "ssn", "ssns", "ssid", "soc sec"};
const ContextTerms kPhoneTerms = {"phone",     "phones",   "cellular",  "contact",  "fax",
                                  "facsimile", "mobile",   "msisdn",    "tel",      "tele",
                                  "cell",      "tollfree", "toll free", "telephone"};
const ContextTerms kNearPhoneTerms = {"call", "contact", "reach"};
const ContextTerms kFaxTerms = {"fax", "facsimile"};
const ContextTerms kVersionTerms = {"v",       "ver",   "version", "versions",
                                    "release", "build", "rev",     "revision"};
const ContextTerms kBirthTerms = {"born",      "birth", "dob",          "birthday",
                                  "birthdate", "d.o.b", "date of birth"};
const ContextTerms kPassportTerms = {"passport", "passport#", "passportno"};
const ContextTerms kLicenceTerms = {"driver", "drivers", "license", "licence", "dl",
                                    "lic",    "lic#",    "driving", "dlno"};
const ContextTerms kPostcodeTerms = {"zip",      "zipcode",   "postal",      "postcode",
                                     "zip code", "post code", "postal code", "zip5"};

// Presidio's IPv4-mapped, IPv4-embedded and IPv6 patterns in one alternation.
const char* const kIpv6Pattern =
    "(?<![\\w:])(?:::(?:ffff(?::0{1,4})?:)?(?:(?:25[0-5]|2[0-4][0-9]|[01]?[0-9][0-9]?)\\."
    "){3}(?:25[0-5]|2[0-4][0-9]|[01]?[0-9][0-9]?)|(?:(?:[0-9A-Fa-f]{1,4}:){1,5}:(?:[0-9A-"
    "Fa-f]{1,4}:){0,4}|(?:[0-9A-Fa-f]{1,4}:){6})(?:(?:25[0-5]|2[0-4][0-9]|[01]?[0-9][0-9]"
    "?)\\.){3}(?:25[0-5]|2[0-4][0-9]|[01]?[0-9][0-9]?)|(?:(?:[0-9A-Fa-f]{1,4}:){7}[0-9A-F"
    "a-f]{1,4}|(?:[0-9A-Fa-f]{1,4}:){1,7}:|:(?::[0-9A-Fa-f]{1,4}){1,7}|(?:[0-9A-Fa-f]{1,4"
    "}:){1,6}:[0-9A-Fa-f]{1,4}|(?:[0-9A-Fa-f]{1,4}:){1,5}(?::[0-9A-Fa-f]{1,4}){1,2}|(?:[0"
    "-9A-Fa-f]{1,4}:){1,4}(?::[0-9A-Fa-f]{1,4}){1,3}|(?:[0-9A-Fa-f]{1,4}:){1,3}(?::[0-9A-"
    "Fa-f]{1,4}){1,4}|(?:[0-9A-Fa-f]{1,4}:){1,2}(?::[0-9A-Fa-f]{1,4}){1,5}|[0-9A-Fa-f]{1,"
    "4}:(?::[0-9A-Fa-f]{1,4}){1,6}|:(?::[0-9A-Fa-f]{1,4}){1,6})(?:%[0-9a-zA-Z]+)?)(?:/(?:"
    "12[0-8]|1[01][0-9]|[1-9]?[0-9]))?(?![\\w:]|\\.[0-9])";

std::optional<Detection> accept_email(const Match& m, const ScanContext& scan) {
  const std::string_view text = text_of(scan, m.begin, m.end);
  if (!PublicSuffixList::system().has_registrable_domain(text.substr(text.rfind('@') + 1)))
    return std::nullopt;
  return detected(m, Entity::kEmail, 1.0);
}

std::optional<Detection> accept_url(const Match& m, const ScanContext& scan) {
  std::size_t end = m.end;
  while (end > m.begin &&
         std::string_view(".,;:!?").find(scan.cell[end - 1]) != std::string_view::npos)
    --end;  // sentence punctuation after a link is not part of it
  const std::string_view text = text_of(scan, m.begin, end);
  const auto scheme = text.find("://");
  const std::size_t host_begin = scheme == std::string_view::npos ? 0 : scheme + 3;
  const std::size_t host_end = std::min(text.find_first_of("/:?#", host_begin), text.size());
  if (!PublicSuffixList::system().has_registrable_domain(
          text.substr(host_begin, host_end - host_begin)))
    return std::nullopt;
  return Detection{m.begin, end, Entity::kUrl, 1.0};
}

std::optional<Detection> accept_card(const Match& m, const ScanContext& scan) {
  const std::string digits = ascii_digits(text_of(scan, m.begin, m.end));
  if (!luhn_valid(digits) || !card_brand(digits)) return std::nullopt;
  if (group_set(m, 0) || group_set(m, 1)) return detected(m, Entity::kCreditDebitCard, 1.0);
  if (!context_before(m, scan, kCardTerms)) return std::nullopt;
  return detected(m, Entity::kCreditDebitCard, 0.8);
}

std::optional<Detection> accept_itin(const Match& m, const ScanContext& scan) {
  const std::string_view separator = text_of(scan, static_cast<std::size_t>(m.groups[0].first),
                                             static_cast<std::size_t>(m.groups[0].second));
  if (separator == "-") return detected(m, Entity::kTaxId, 1.0);
  if (!context_before(m, scan, kItinTerms)) return std::nullopt;
  return detected(m, Entity::kTaxId, 0.8);
}

// stdnum's ranges and Presidio's invalidation: no repeated digit, not the
// advertised 123-45-6789 nor 987-65-432x.
std::optional<Detection> accept_ssn(const Match& m, const ScanContext& scan) {
  const std::string digits = ascii_digits(text_of(scan, m.begin, m.end));
  if (!ssn_valid(digits) || digits.find_first_not_of(digits[0]) == std::string::npos ||
      digits.rfind("123456789", 0) == 0 || digits.rfind("98765432", 0) == 0)
    return std::nullopt;
  const std::string_view separator = text_of(scan, static_cast<std::size_t>(m.groups[0].first),
                                             static_cast<std::size_t>(m.groups[0].second));
  if (separator == "-") return detected(m, Entity::kSsn, 1.0);
  if (!context_before(m, scan, kSsnTerms)) return std::nullopt;
  return detected(m, Entity::kSsn, 0.8);
}

// A North American number: dialable, and written as a phone number is
// (area code in parentheses, or both separators) or named by the words
// around it. "fax" among them makes it a fax number.
std::optional<Detection> accept_phone(const Match& m, const ScanContext& scan) {
  const std::string_view number = text_of(scan, static_cast<std::size_t>(m.groups[0].first),
                                          static_cast<std::size_t>(m.groups[0].second));
  if (!nanp_valid(ascii_digits(number))) return std::nullopt;
  const bool fax = window_has(scan.cell, m.begin, m.end, 24, kFaxTerms) ||
                   has_context({}, scan.header_tokens, kFaxTerms);
  const Entity entity = fax ? Entity::kFaxNumber : Entity::kPhoneNumber;
  const bool formatted = number[0] == '(' || (group_set(m, 1) && group_set(m, 2));
  if (formatted) return detected(m, entity, 0.9);
  if (window_has(scan.cell, m.begin, m.end, 24, kPhoneTerms) ||
      window_has(scan.cell, m.begin, m.end, 16, kNearPhoneTerms) ||
      has_context({}, scan.header_tokens, kPhoneTerms))
    return detected(m, entity, 0.8);
  return std::nullopt;
}

// E.164 outside North America: "+" and 8–15 digits (+1 is accept_phone's).
std::optional<Detection> accept_e164(const Match& m, const ScanContext& scan) {
  const std::string digits = ascii_digits(text_of(scan, m.begin, m.end));
  if (digits.size() < 8 || digits.size() > 15 || digits[0] == '1') return std::nullopt;
  const bool fax = window_has(scan.cell, m.begin, m.end, 24, kFaxTerms) ||
                   has_context({}, scan.header_tokens, kFaxTerms);
  return detected(m, fax ? Entity::kFaxNumber : Entity::kPhoneNumber, 0.9);
}

// Presidio's fallback: the longest of the three group ends that validates.
std::optional<Detection> accept_iban(const Match& m, const ScanContext& scan) {
  for (std::size_t group = 3; group-- > 0;) {
    if (!group_set(m, group) || m.groups[group].second == m.groups[group].first) continue;
    const auto end = static_cast<std::size_t>(m.groups[group].second);
    if (iban_valid(text_of(scan, m.begin, end))) return Detection{m.begin, end, Entity::kIban, 1.0};
  }
  return std::nullopt;
}

// A version number is no address: "v1.2.3.4", "version 10.0.0.1".
std::optional<Detection> accept_ipv4(const Match& m, const ScanContext& scan) {
  if (!ipv4_valid(text_of(scan, m.begin, m.end), true)) return std::nullopt;
  const std::vector<std::string> before = words_before(scan.cell, m.begin, 1);
  if (has_context(before, scan.header_tokens, kVersionTerms) ||
      (m.begin > 0 && (scan.cell[m.begin - 1] == 'v' || scan.cell[m.begin - 1] == 'V')))
    return std::nullopt;
  return detected(m, Entity::kIpv4, 1.0);
}

std::optional<Detection> accept_ipv6(const Match& m, const ScanContext& scan) {
  if (!ipv6_valid(text_of(scan, m.begin, m.end), true)) return std::nullopt;
  return detected(m, Entity::kIpv6, 1.0);
}

std::optional<Detection> accept_mac(const Match& m, const ScanContext& scan) {
  std::string hex;
  for (const char c : text_of(scan, m.begin, m.end))
    if (c != ':' && c != '-' && c != '.') hex.push_back(static_cast<char>(std::toupper(c)));
  if (hex == "FFFFFFFFFFFF" || hex == "000000000000") return std::nullopt;
  return detected(m, Entity::kMacAddress, 1.0);
}

std::optional<Detection> accept_uuid(const Match& m, const ScanContext&) {
  return detected(m, Entity::kUuid, 1.0);
}

std::optional<Detection> accept_birth_date(const Match& m, const ScanContext& scan) {
  if (!read_date(text_of(scan, m.begin, m.end)) || !context_before(m, scan, kBirthTerms))
    return std::nullopt;
  return detected(m, Entity::kDateOfBirth, 0.8);
}

std::optional<Detection> accept_passport(const Match& m, const ScanContext& scan) {
  if (!context_before(m, scan, kPassportTerms)) return std::nullopt;
  return detected(m, Entity::kPassportNumber, 0.8);
}

std::optional<Detection> accept_licence(const Match& m, const ScanContext& scan) {
  if (!context_before(m, scan, kLicenceTerms)) return std::nullopt;
  return detected(m, Entity::kDriversLicense, 0.8);
}

std::optional<Detection> accept_postcode(const Match& m, const ScanContext& scan) {
  if (!context_before(m, scan, kPostcodeTerms) &&
      !window_has(scan.cell, m.begin, m.end, 16, kPostcodeTerms))
    return std::nullopt;
  return detected(m, Entity::kPostcode, 0.6);
}

}  // namespace

CellFeatures cell_features(std::string_view cell) {
  CellFeatures f;
  bool other = false;
  for (const char c : cell) {
    if (is_ascii_digit(c)) {
      ++f.digits;
      continue;
    }
    switch (c) {
      case ':':
        ++f.colons;
        break;
      case '-':
        ++f.dashes;
        break;
      case '.':
        ++f.dots;
        break;
      case '/':
        ++f.slashes;
        break;
      case '@':
        f.at_sign = true;
        break;
      case '+':
        f.plus = true;
        break;
      default:
        f.uppercase = f.uppercase || (c >= 'A' && c <= 'Z');
        other = true;
    }
  }
  f.web = f.slashes >= 2 || cell.find("www.") != std::string_view::npos ||
          cell.find("WWW.") != std::string_view::npos;
  f.plain_number = f.digits > 0 && !other && f.colons == 0 && f.slashes == 0 && !f.at_sign &&
                   !f.plus && f.dots <= 1 && (f.dashes == 0 || (f.dashes == 1 && cell[0] == '-'));
  return f;
}

namespace {

// E-mail addresses, URLs, cards, SSNs, ITINs and phone numbers.
std::vector<Recognizer> contact_and_number_recognizers() {
  return {
      {{Entity::kEmail},
       Pattern(
           "\\b(?:[!#$%&'*+\\-/=?^_`{|}~\\w]|[!#$%&'*+\\-/=?^_`{|}~\\w][!#$%&'*+\\-/=?^_`{|}~.\\w]*"
           "[!#$%&'*+\\-/=?^_`{|}~\\w])@\\w+(?:-+\\w+)*(?:\\.\\w+(?:-+\\w+)*)+\\b",
           kCaseless, "email"),
       [](const CellFeatures& f) { return f.at_sign; },
       accept_email,
       nullptr},
      {{Entity::kUrl},
       Pattern("\\b(?:https?://|www\\.)[^\\s<>\"'()\\[\\]{}]+", kCaseless, "url"),
       [](const CellFeatures& f) { return f.web; },
       accept_url,
       nullptr},
      {{Entity::kCreditDebitCard},
       Pattern("(?<![0-9])(?<![0-9][ -])(?:[0-9]{4}([ -])[0-9]{4}\\1[0-9]{4}\\1[0-9]{1,7}|"
               "[0-9]{4}([ -])[0-9]{6}\\2[0-9]{4,5}|[0-9]{12,19})(?![0-9])(?![ -][0-9])",
               0, "credit_debit_card"),
       [](const CellFeatures& f) { return f.digits >= 12; },
       accept_card,
       &kCardTerms},
      {{Entity::kTaxId},
       Pattern("(?<![0-9-])9[0-9]{2}([- ]?)(?:5[0-9]|6[0-5]|7[0-9]|8[0-8]|9[0-2]|9[4-9])\\1[0-9]{4}"
               "(?![0-9]|-[0-9])",
               0, "tax_id"),
       [](const CellFeatures& f) { return f.digits >= 9; },
       accept_itin,
       &kItinTerms},
      {{Entity::kSsn},
       Pattern("(?<![0-9-])[0-9]{3}([- .]?)[0-9]{2}\\1[0-9]{4}(?![0-9]|-[0-9])", 0, "ssn"),
       [](const CellFeatures& f) { return f.digits >= 9; },
       accept_ssn,
       &kSsnTerms},
      {{Entity::kPhoneNumber, Entity::kFaxNumber},
       Pattern("(?<![\\w+])(?:(?:\\+?1|001)[-. ]?)?((?:\\([0-9]{3}\\)|[0-9]{3})([-.* ])?[0-9]{3}"
               "([-.* ])?[0-9]{4})(?:\\s*(?:x|ext\\.?)\\s*[0-9]{1,6})?(?![0-9])",
               kCaseless, "phone_number"),
       [](const CellFeatures& f) { return f.digits >= 10; },
       accept_phone,
       &kPhoneTerms},
      {{Entity::kPhoneNumber, Entity::kFaxNumber},
       Pattern("(?<![\\w+])\\+[1-9][0-9]{0,3}(?:[ .-]?[0-9]{1,4}){2,6}(?![0-9])", 0, "e164"),
       [](const CellFeatures& f) { return f.plus && f.digits >= 8; },
       accept_e164,
       nullptr},
  };
}

// Account and network identifiers, and the numbers only context tells.
std::vector<Recognizer> identifier_recognizers() {
  return {
      {{Entity::kIban},
       Pattern("(?<![A-Z0-9])([A-Z]{2}[0-9]{2}(?:[ -]?[A-Z0-9]{4}){2,6})((?:[ -]?[A-Z0-9]{4})?)"
               "((?:[ -]?[A-Z0-9]{1,3})?)(?![A-Z0-9])",
               0, "iban"),
       [](const CellFeatures& f) { return f.uppercase && f.digits >= 4; },
       accept_iban,
       nullptr},
      {{Entity::kIpv4},
       Pattern("(?<![0-9A-Za-z.])(?:(?:25[0-5]|2[0-4][0-9]|[01]?[0-9][0-9]?)\\.){3}"
               "(?:25[0-5]|2[0-4][0-9]|[01]?[0-9][0-9]?)(?:/(?:[0-2]?[0-9]|3[0-2]))?(?![0-9])"
               "(?!\\.[0-9])",
               0, "ipv4"),
       [](const CellFeatures& f) { return f.dots >= 3 && f.digits >= 4; },
       accept_ipv4,
       nullptr},
      {{Entity::kIpv6},
       Pattern(kIpv6Pattern, 0, "ipv6"),
       [](const CellFeatures& f) { return f.colons >= 2; },
       accept_ipv6,
       nullptr},
      {{Entity::kMacAddress},
       Pattern("\\b[0-9A-Fa-f]{2}([:-])(?:[0-9A-Fa-f]{2}\\1){4}[0-9A-Fa-f]{2}\\b|"
               "\\b[0-9A-Fa-f]{4}\\.[0-9A-Fa-f]{4}\\.[0-9A-Fa-f]{4}\\b",
               0, "mac_address"),
       [](const CellFeatures& f) { return f.colons >= 5 || f.dashes >= 5 || f.dots >= 2; },
       accept_mac,
       nullptr},
      {{Entity::kUuid},
       Pattern("(?<![0-9a-f-])[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-"
               "[0-9a-f]{12}(?![0-9a-f-])",
               kCaseless, "uuid"),
       [](const CellFeatures& f) { return f.dashes >= 4; },
       accept_uuid,
       nullptr},
      {{Entity::kDateOfBirth},
       Pattern("(?<![0-9./-])(?:[0-9]{4}([-/.])[0-9]{1,2}\\1[0-9]{1,2}|"
               "[0-9]{1,2}([-/.])[0-9]{1,2}\\2(?:[0-9]{4}|[0-9]{2}))(?![0-9]|[./-][0-9])",
               0, "date_of_birth"),
       [](const CellFeatures& f) { return f.digits >= 4 && f.dashes + f.slashes + f.dots >= 2; },
       accept_birth_date,
       &kBirthTerms},
      {{Entity::kPassportNumber},
       Pattern("(?<![A-Za-z0-9])[A-Z]{0,2}[0-9]{6,9}(?![A-Za-z0-9])", 0, "passport_number"),
       [](const CellFeatures& f) { return f.digits >= 6; },
       accept_passport,
       &kPassportTerms},
      {{Entity::kDriversLicense},
       Pattern("(?<![A-Za-z0-9-])(?=[A-Z0-9-]*[0-9]{4})[A-Z0-9][A-Z0-9-]{3,18}[A-Z0-9]"
               "(?![A-Za-z0-9-])",
               0, "drivers_license"),
       [](const CellFeatures& f) { return f.digits >= 4; },
       accept_licence,
       &kLicenceTerms},
      {{Entity::kPostcode},
       Pattern("(?<![0-9-])[0-9]{5}(?:-[0-9]{4})?(?![0-9]|-[0-9])", 0, "postcode"),
       [](const CellFeatures& f) { return f.digits >= 5; },
       accept_postcode,
       &kPostcodeTerms},
  };
}

}  // namespace

const std::vector<Recognizer>& recognizers() {
  static const std::vector<Recognizer> all = [] {
    std::vector<Recognizer> out = contact_and_number_recognizers();
    for (Recognizer& recognizer : identifier_recognizers()) out.push_back(std::move(recognizer));
    return out;
  }();
  return all;
}

}  // namespace nss::pii
