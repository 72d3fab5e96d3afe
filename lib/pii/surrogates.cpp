#include "pii/surrogates.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <vector>

#include "pii/ascii_text.h"
#include "pii/checksums.h"
#include "pii/dates.h"
#include "pii/iban.h"

namespace nss::pii {
namespace {

std::size_t digit_count(std::string_view text) {
  return static_cast<std::size_t>(std::count_if(text.begin(), text.end(), is_ascii_digit));
}

char random_digit(KeyedStream& stream) {
  return static_cast<char>('0' + stream.uniform(10));
}

std::string number(KeyedStream& stream, std::uint64_t low, std::uint64_t high, int width) {
  char text[24];
  std::snprintf(text, sizeof text, "%0*llu", width,
                static_cast<unsigned long long>(low + stream.uniform(high - low + 1)));
  return text;
}

// `digits` written into the digit positions of `layout` when it has exactly
// as many, every other character kept; else `fallback`'s layout (# for a digit).
std::string in_layout(std::string_view layout, const std::string& digits,
                      std::string_view fallback) {
  const std::string_view shape = digit_count(layout) == digits.size() ? layout : fallback;
  std::string out;
  std::size_t next = 0;
  for (const char c : shape) {
    const bool slot = shape == layout ? is_ascii_digit(c) : c == '#';
    out.push_back(slot && next < digits.size() ? digits[next++] : c);
  }
  return out;
}

const WeightedWord& weighted(const std::vector<WeightedWord>& words, KeyedStream& stream) {
  double total = 0;
  for (const auto& w : words) total += w.weight;
  double point = stream.unit() * total;
  for (const auto& w : words) {
    if (point < w.weight) return w;
    point -= w.weight;
  }
  return words.back();
}

const std::string& uniform_word(const std::vector<WeightedWord>& words, KeyedStream& stream) {
  return words[stream.uniform(words.size())].word;
}

std::string first_name(const WordLists& lists, KeyedStream& stream) {
  const auto& female = lists.first_names_female;
  const auto& male = lists.first_names_male;
  double female_total = 0, male_total = 0;
  for (const auto& w : female) female_total += w.weight;
  for (const auto& w : male) male_total += w.weight;
  const bool is_female = stream.unit() * (female_total + male_total) < female_total;
  return weighted(is_female ? female : male, stream).word;
}

// `word` in the case style of `like`: ALL CAPS, all lower, or as the list has it.
std::string styled(std::string word, std::string_view like) {
  const bool has_upper = std::any_of(like.begin(), like.end(), ::isupper);
  const bool has_lower = std::any_of(like.begin(), like.end(), ::islower);
  if (has_upper && !has_lower)
    std::transform(word.begin(), word.end(), word.begin(), ::toupper);
  else if (has_lower && !has_upper)
    std::transform(word.begin(), word.end(), word.begin(), ::tolower);
  return word;
}

std::string phone(std::string_view original, KeyedStream& stream) {
  const auto exchange = [&] {  // [2-9]xx, not [2-9]11
    for (;;) {
      std::string part = number(stream, 200, 999, 3);
      if (part.substr(1) != "11") return part;
    }
  };
  std::string digits = exchange() + exchange() + number(stream, 0, 9999, 4);
  const std::string original_digits = ascii_digits(original);
  if (original_digits.size() > 10)  // a country code (1 in North America) before the number: kept
    digits.insert(0, original_digits.substr(0, original_digits.size() - 10));
  return in_layout(original, digits, "###-###-####");
}

std::string ssn_like(std::string_view original, KeyedStream& stream, bool itin) {
  for (;;) {
    std::string digits;
    if (itin) {
      static const int kGroups[] = {70, 71, 72, 73, 74, 75, 76, 77, 78, 79, 80, 81, 82, 83,
                                    84, 85, 86, 87, 88, 90, 91, 92, 94, 95, 96, 97, 98, 99};
      digits = number(stream, 900, 999, 3) +
               std::to_string(kGroups[stream.uniform(std::size(kGroups))]) +
               number(stream, 0, 9999, 4);
    } else {
      std::string area = number(stream, 1, 899, 3);
      if (area == "666") continue;
      digits = area + number(stream, 1, 99, 2) + number(stream, 1, 9999, 4);
    }
    const std::string out = in_layout(original, digits, "###-##-####");
    if (itin ? itin_valid(out) : ssn_valid(out)) return out;
  }
}

std::string card(std::string_view original, KeyedStream& stream) {
  const std::string kept = ascii_digits(original);
  const bool shaped = kept.size() >= 12 && kept.size() <= 19 && card_brand(kept);
  const std::size_t length = shaped ? kept.size() : 16;
  const char lead = shaped ? kept[0] : '4';
  for (int attempt = 0;; ++attempt) {
    std::string digits(1, lead);
    while (digits.size() + 1 < length) digits.push_back(random_digit(stream));
    if (shaped && attempt < 1000 && card_brand(digits + '0') != card_brand(kept)) continue;
    digits.push_back(luhn_check_digit(digits));
    return in_layout(original, digits, "#### #### #### ####");
  }
}

}  // namespace
namespace {

std::string iban(std::string_view original, KeyedStream& stream) {
  const std::string compact = iban_compact(original);
  const IbanCountry* country = iban_country(compact.substr(0, 2));
  if (!country) country = iban_country("DE");
  static const char kLetters[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
  static const char kAlphanumeric[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  std::string bban;
  for (const BbanField& field : country->fields)
    for (int i = 0; i < field.count; ++i)
      bban.push_back(field.characters == BbanCharacters::kDigits ? random_digit(stream)
                     : field.characters == BbanCharacters::kUppercase
                         ? kLetters[stream.uniform(26)]
                         : kAlphanumeric[stream.uniform(36)]);
  const std::string drawn =
      std::string(country->code) + iban_check_digits(country->code, bban) + bban;
  if (compact.size() != drawn.size()) return drawn;
  // The original's spacing and case kept: its letters and digits replaced in order.
  std::string out(original);
  std::size_t next = 0;
  for (char& c : out)
    if (std::isalnum(static_cast<unsigned char>(c)) && next < drawn.size()) c = drawn[next++];
  return out;
}

std::string postcode(std::string_view original, KeyedStream& stream) {
  std::string digits = number(stream, 501, 99950, 5);
  if (digit_count(original) == 9)
    return in_layout(original, digits + number(stream, 1, 9999, 4), "");
  return in_layout(original, digits, "#####");
}

std::string email(const WordLists& lists, KeyedStream& stream) {
  static const char* const kDomains[] = {"example.com", "example.net", "example.org"};
  std::string local = first_name(lists, stream) + "." + weighted(lists.last_names, stream).word;
  std::transform(local.begin(), local.end(), local.begin(), ::tolower);
  return local + number(stream, 0, 99, 2) + "@" + kDomains[stream.uniform(3)];
}

// "First Last", "Last, First" kept as such, a leading title ("Dr.") kept.
std::string full_name(std::string_view original, const WordLists& lists, KeyedStream& stream) {
  const std::string first = first_name(lists, stream);
  const std::string last = weighted(lists.last_names, stream).word;
  const std::size_t space = original.find(' ');
  const std::string title = space != std::string_view::npos && space > 0 &&
                                    original[space - 1] == '.' &&
                                    original.find(' ', space + 1) != std::string_view::npos
                                ? std::string(original.substr(0, space + 1))
                                : "";
  const bool last_first = original.find(',') != std::string_view::npos;
  return title + styled(last_first ? last + ", " + first : first + " " + last, original);
}

std::string street_address(std::string_view original, const WordLists& lists, KeyedStream& stream) {
  std::size_t building = 0;
  while (building < original.size() && is_ascii_digit(original[building])) ++building;
  if (building < 3 || building > 5) building = 3 + stream.uniform(3);
  std::string out = number(stream, 1, 9, 1);
  while (out.size() < building) out.push_back(random_digit(stream));
  out += " " +
         (stream.uniform(2) == 0 ? first_name(lists, stream)
                                 : weighted(lists.last_names, stream).word) +
         " " + uniform_word(lists.street_suffixes, stream);
  const std::string lower = [&] {
    std::string text(original);
    std::transform(text.begin(), text.end(), text.begin(), ::tolower);
    return text;
  }();
  if (lower.find("apt") != std::string::npos)
    out += " Apt. " + number(stream, 100, 999, 3);
  else if (lower.find("suite") != std::string::npos)
    out += " Suite " + number(stream, 100, 999, 3);
  return styled(out, original);
}

std::string city(const WordLists& lists, KeyedStream& stream) {
  const std::string& prefix = uniform_word(lists.city_prefixes, stream);
  const std::string& suffix = uniform_word(lists.city_suffixes, stream);
  switch (stream.uniform(4)) {  // Faker's four city formats
    case 0:
      return prefix + " " + first_name(lists, stream) + suffix;
    case 1:
      return prefix + " " + first_name(lists, stream);
    case 2:
      return first_name(lists, stream) + suffix;
    default:
      return weighted(lists.last_names, stream).word + suffix;
  }
}

std::string ipv4(KeyedStream& stream) {
  for (;;) {
    const std::uint64_t host = stream.uniform(1u << 24);
    if (host == 0 || host == (1u << 24) - 1) continue;  // the network and broadcast
    return "10." + std::to_string(host >> 16) + "." + std::to_string(host >> 8 & 255) + "." +
           std::to_string(host & 255);
  }
}

std::string ipv6(KeyedStream& stream) {
  char text[48];
  int at = std::snprintf(text, sizeof text, "fd%02x", static_cast<unsigned>(stream.uniform(256)));
  for (int group = 1; group < 8; ++group)
    at += std::snprintf(text + at, sizeof text - static_cast<std::size_t>(at), ":%x",
                        static_cast<unsigned>(stream.uniform(65536)));
  return text;
}

std::string mac_address(std::string_view original, KeyedStream& stream) {
  const char separator = original.find('-') != std::string_view::npos ? '-' : ':';
  const bool upper = std::any_of(original.begin(), original.end(), ::isupper);
  std::string out;
  for (int octet = 0; octet < 6; ++octet) {
    unsigned value = static_cast<unsigned>(stream.uniform(256));
    if (octet == 0) value = (value | 0x02) & ~0x01u;  // locally administered, unicast
    char text[12];
    std::snprintf(text, sizeof text, upper ? "%02X" : "%02x", value & 0xffu);
    if (octet > 0) out.push_back(separator);
    out += text;
  }
  return out;
}

// A version-4 UUID in the original's hex positions (hyphens, braces kept)
// and case; the standard 8-4-4-4-12 layout when the original has no 32 hex digits.
std::string uuid(std::string_view original, KeyedStream& stream) {
  static const char kHex[] = "0123456789abcdef";
  std::string hex;
  for (int i = 0; i < 32; ++i) hex.push_back(kHex[stream.uniform(16)]);
  hex[12] = '4';
  hex[16] = kHex[8 + stream.uniform(4)];  // the RFC 4122 variant: 8, 9, a or b
  const auto is_hex = [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; };
  const bool fits = std::count_if(original.begin(), original.end(), is_hex) == 32;
  const std::string layout = fits ? std::string(original) : "########-####-####-####-############";
  const bool upper = std::any_of(original.begin(), original.end(), ::isupper);
  std::string out;
  std::size_t next = 0;
  for (const char c : layout) {
    const bool slot = fits ? is_hex(c) : c == '#';
    out.push_back(slot ? static_cast<char>(upper ? std::toupper(hex[next++]) : hex[next++]) : c);
  }
  return out;
}

// https://example.com/ and as many drawn path segments as the original has.
std::string url(std::string_view original, KeyedStream& stream) {
  static const char kCharacters[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  const auto scheme = original.find("://");
  const auto host_begin = scheme == std::string_view::npos ? 0 : scheme + 3;
  const auto path_begin = original.find('/', host_begin);
  std::size_t segments = 0;
  if (path_begin != std::string_view::npos) {
    const std::string_view path =
        original.substr(path_begin, original.find_first_of("?# ", path_begin) - path_begin);
    for (std::size_t i = 0; i < path.size(); ++i)
      segments += path[i] != '/' && (i == 0 || path[i - 1] == '/');
  }
  std::string out = "https://example.com/";
  for (std::size_t segment = 0; segment < segments; ++segment) {
    if (segment > 0) out.push_back('/');
    const std::uint64_t length = 4 + stream.uniform(7);
    for (std::uint64_t i = 0; i < length; ++i) out.push_back(kCharacters[stream.uniform(36)]);
  }
  return out;
}

// Another real date within three years of the original, written as it was.
std::string date_of_birth(std::string_view original, KeyedStream& stream) {
  const std::optional<WrittenDate> written = read_date(original);
  const WrittenDate like = written ? *written : WrittenDate{};
  const long day = written ? days_from_civil(written->date) : days_from_civil({1980, 1, 1});
  constexpr long kSpan = 3 * 365;
  for (;;) {
    const long offset = static_cast<long>(stream.uniform(2 * kSpan + 1)) - kSpan;
    const std::string out = write_date(civil_from_days(day + offset), like);
    if (offset != 0 && read_date(out) && out != original) return out;
  }
}

// Letters replaced by drawn letters and digits by drawn digits, in place,
// each letter's case kept: a passport or licence number of the same format.
std::string same_format_identifier(std::string_view original, KeyedStream& stream) {
  std::string out(original);
  for (char& c : out) {
    if (is_ascii_digit(c))
      c = random_digit(stream);
    else if (c >= 'A' && c <= 'Z')
      c = static_cast<char>('A' + stream.uniform(26));
    else if (c >= 'a' && c <= 'z')
      c = static_cast<char>('a' + stream.uniform(26));
  }
  return out;
}

}  // namespace

StatePermutation::StatePermutation(const PiiKey& key, const WordLists& lists) {
  for (const auto* words : {&lists.states, &lists.states_abbr}) {
    std::vector<std::pair<std::array<std::uint8_t, 32>, std::string>> order;
    for (const auto& w : *words)
      order.emplace_back(key.mac(std::string("nss-pii/v1/perm") + '\0' + "state" + '\0' + w.word),
                         w.word);
    std::sort(order.begin(), order.end());
    for (std::size_t i = 0; i < order.size(); ++i) {
      std::string lower = order[i].second;
      std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
      next_[lower] = order[(i + 1) % order.size()].second;
    }
  }
}

std::optional<std::string> StatePermutation::next(std::string_view value) const {
  std::string lower;
  for (const char c : value)
    if (!std::isspace(static_cast<unsigned char>(c)) || !lower.empty()) lower.push_back(c);
  while (!lower.empty() && std::isspace(static_cast<unsigned char>(lower.back()))) lower.pop_back();
  std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
  const auto found = next_.find(lower);
  if (found == next_.end()) return std::nullopt;
  return found->second;
}

std::string draw_surrogate(Entity entity, std::string_view original, KeyedStream& stream,
                           const SurrogateSources& sources) {
  const WordLists& lists = sources.lists;
  switch (entity) {
    case Entity::kFirstName:
      return styled(first_name(lists, stream), original);
    case Entity::kLastName:
      return styled(weighted(lists.last_names, stream).word, original);
    case Entity::kName:
      return full_name(original, lists, stream);
    case Entity::kStreetAddress:
      return street_address(original, lists, stream);
    case Entity::kCity:
      return styled(city(lists, stream), original);
    case Entity::kState: {
      const auto next = sources.states.next(original);
      return styled(next ? *next : uniform_word(lists.states, stream), original);
    }
    case Entity::kPostcode:
      return postcode(original, stream);
    case Entity::kAddress:
      return street_address("", lists, stream) + ", " + city(lists, stream) + ", " +
             uniform_word(lists.states_abbr, stream) + " " + number(stream, 501, 99950, 5);
    case Entity::kPhoneNumber:
    case Entity::kFaxNumber:
      return phone(original, stream);
    case Entity::kEmail:
      return email(lists, stream);
    case Entity::kSsn:
      return ssn_like(original, stream, false);
    case Entity::kNationalId:
    case Entity::kTaxId:
      return ssn_like(original, stream, true);
    case Entity::kCreditDebitCard:
      return card(original, stream);
    case Entity::kIban:
      return iban(original, stream);
    case Entity::kIpv4:
      return ipv4(stream);
    case Entity::kIpv6:
      return ipv6(stream);
    case Entity::kMacAddress:
      return mac_address(original, stream);
    case Entity::kUuid:
      return uuid(original, stream);
    case Entity::kUrl:
      return url(original, stream);
    case Entity::kDateOfBirth:
      return date_of_birth(original, stream);
    case Entity::kPassportNumber:
    case Entity::kDriversLicense:
      return same_format_identifier(original, stream);
  }
  return std::string(original);
}

}  // namespace nss::pii
