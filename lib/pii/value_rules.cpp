#include "pii/value_rules.h"

#include <algorithm>
#include <cctype>
#include <vector>

#include "pii/ascii_text.h"
#include "pii/checksums.h"
#include "pii/dates.h"
#include "pii/iban.h"
#include "pii/network.h"
#include "pii/public_suffix.h"

namespace nss::pii {
namespace {

std::vector<std::string_view> split_spaces(std::string_view text) {
  std::vector<std::string_view> words;
  std::size_t at = 0;
  while (at < text.size()) {
    const auto begin = text.find_first_not_of(" \t\r\n\v\f", at);
    if (begin == std::string_view::npos) break;
    const auto end = std::min(text.find_first_of(" \t\r\n\v\f", begin), text.size());
    words.push_back(text.substr(begin, end - begin));
    at = end;
  }
  return words;
}

// USPS street suffix abbreviations, beside Faker's suffixes.
const char* const kUspsSuffixes[] = {
    "St",   "Ave",  "Av",   "Rd",   "Blvd", "Dr",   "Ln",   "Ct",   "Pl",   "Sq",  "Ter", "Trl",
    "Pkwy", "Hwy",  "Cir",  "Cres", "Expy", "Fwy",  "Jct",  "Mnr",  "Plz",  "Pt",  "Rdg", "Sta",
    "Tpke", "Vly",  "Xing", "Aly",  "Byp",  "Cswy", "Ctr",  "Cv",   "Crk",  "Est", "Ext", "Fls",
    "Frk",  "Frst", "Ft",   "Gdns", "Gln",  "Grv",  "Hbr",  "Hts",  "Holw", "Is",  "Knl", "Lk",
    "Ldg",  "Mdw",  "Mtn",  "Pass", "Path", "Pike", "Pnes", "Prt",  "Rnch", "Run", "Shr", "Spg",
    "Strm", "Trce", "Trak", "Un",   "Vis",  "Vw",   "Vlg",  "Walk", "Wall", "Way", "Wls", "Xrd"};

// Faker's en_US territories_abbr, valid state codes of an address.
const char* const kTerritories[] = {"AS", "FM", "GU", "MH", "MP", "PW", "PR", "VI"};

// A street address is a number, up to four words and a street suffix
// (found in code: a hash lookup beats a pattern of 250 alternatives), then
// an apartment or suite; the one-line address continues to its state.
const char* const kStreetLead =
    "^[0-9]{1,6}[A-Z]?\\s+(?:[NSEW]\\.?\\s+)?(?:[\\p{L}0-9'\\x{2019}.-]+\\s+){0,4}$";
const char* const kStreetTail = "^\\.?(?:\\s+(?:Apt\\.?|Suite|Unit|Ste\\.?|#)\\s*[0-9A-Za-z-]+)?$";
const char* const kAddressMiddle =
    "^\\.?(?:\\s+(?:Apt\\.?|Suite|Unit|Ste\\.?|#)\\s*[0-9A-Za-z-]+)?[\\s,]+.+?(?:,\\s*|\\s+)$";

const char* const kEmail =
    "^(?:[!#$%&'*+\\-/=?^_`{|}~\\w]|[!#$%&'*+\\-/=?^_`{|}~\\w][!#$%&'*+\\-/=?^_`{|}~.\\w]*"
    "[!#$%&'*+\\-/=?^_`{|}~\\w])@\\w+(?:-+\\w+)*(?:\\.\\w+(?:-+\\w+)*)+$";

const char* const kPhone =
    "^(?:\\+?1[-. ]?|001[-. ]?)?((?:\\([0-9]{3}\\)[-. ]?|[0-9]{3}[-. ]?)[0-9]{3}[-. ]?[0-9]{4})"
    "(?:\\s*(?:x|ext\\.?|extension)\\s*[0-9]{1,6})?$";

// Whether an ASCII cell starts as an IBAN does (two letters, two digits,
// spaces, hyphens and full stops aside as iban_compact drops them); other
// text is left to iban_valid, which reads look-alike characters.
bool iban_shaped_start(std::string_view cell) {
  std::string start;
  for (const char c : cell) {
    if (c & 0x80) return true;
    if (c != ' ' && c != '-' && c != '.') start.push_back(c);
    if (start.size() == 4) break;
  }
  const auto isalpha = [](char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; };
  return start.size() == 4 && isalpha(start[0]) && isalpha(start[1]) && is_ascii_digit(start[2]) &&
         is_ascii_digit(start[3]);
}

// Cheap bounds that let most cells of another kind skip the patterns and
// validators (a column is measured against every candidate entity).
bool plausible_length(Entity entity, std::string_view cell) {
  const auto has = [&](std::string_view characters) {
    return cell.find_first_of(characters) != std::string_view::npos;
  };
  switch (entity) {
    case Entity::kEmail:
      return has("@");
    case Entity::kCreditDebitCard:
      return cell.size() >= 12 && cell.size() <= 23;
    case Entity::kSsn:
    case Entity::kTaxId:
      return cell.size() >= 9 && cell.size() <= 11;
    case Entity::kPhoneNumber:
    case Entity::kFaxNumber:
      return cell.size() >= 10;
    case Entity::kIban:
      return cell.size() >= 15 && iban_shaped_start(cell);
    case Entity::kIpv4:
      return cell.size() >= 7 && has(".");
    case Entity::kIpv6:
      return has(":");
    case Entity::kMacAddress:
      return cell.size() >= 11 && cell.size() <= 20 && has(":-.");
    case Entity::kUuid:
      return cell.size() >= 32 && cell.size() <= 38;
    case Entity::kUrl:
      return has(".");
    case Entity::kDateOfBirth:
      return cell.size() >= 6 && cell.size() <= 10;
    default:
      return true;
  }
}

}  // namespace

std::string_view trim_ascii(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r\n\v\f");
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(" \t\r\n\v\f") - first + 1);
}

ValueRules::ValueRules(const WordLists& lists)
    : email_(kEmail, kCaseless, "email value"),
      card_grouped_("^[0-9]{4}([ -]?)[0-9]{4}\\1[0-9]{4}\\1[0-9]{0,7}$", 0, "card value"),
      card_long_group_("^[0-9]{4}([ -]?)[0-9]{6}\\1[0-9]{4,5}$", 0, "card value"),
      ssn_dashed_("^[0-9]{3}-[0-9]{2}-[0-9]{4}$", 0, "ssn value"),
      ssn_loose_("^[0-9]{3}( ?)[0-9]{2}\\1[0-9]{4}$", 0, "ssn value"),
      itin_("^9[0-9]{2}-?[0-9]{2}-?[0-9]{4}$", 0, "itin value"),
      phone_(kPhone, kCaseless, "phone value"),
      postcode_("^[0-9]{5}(?:-[0-9]{4})?$", 0, "postcode value"),
      short_zip_("^[0-9]{3,4}$", 0, "postcode value"),
      name_token_("^\\p{Lu}[\\p{L}'\\x{2019}.-]*$|^\\p{Ll}[\\p{Ll}'\\x{2019}.-]*$", 0,
                  "name token"),
      street_lead_(kStreetLead, kCaseless, "street address value"),
      street_tail_(kStreetTail, kCaseless, "street address value"),
      address_middle_(kAddressMiddle, kCaseless, "address value"),
      url_(
          "^(?:https?://)?((?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\\.)+[a-z0-9-]+)(?::[0-9]{1,5})?"
          "(?:[/?#]\\S*)?$",
          kCaseless, "url value"),
      uuid_("^\\{?[0-9a-f]{8}-[0-9a-f]{4}-[1-5][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}\\}?$",
            kCaseless, "uuid value"),
      uuid_loose_("^\\{?[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}\\}?$",
                  kCaseless, "uuid value"),
      passport_("^[A-Z]{0,2}[0-9]{6,9}$", kCaseless, "passport value"),
      identifier_("^[A-Za-z0-9][A-Za-z0-9 -]{3,18}[A-Za-z0-9]$", 0, "identifier value") {
  for (const auto* words : {&lists.first_names_female, &lists.first_names_male})
    for (const WeightedWord& w : *words) first_names_.insert(ascii_lowered(w.word));
  for (const WeightedWord& w : lists.last_names) last_names_.insert(ascii_lowered(w.word));
  for (const WeightedWord& w : lists.states) states_.insert(ascii_lowered(w.word));
  states_.insert("district of columbia");
  for (const WeightedWord& w : lists.states_abbr) state_codes_.insert(w.word);
  for (const WeightedWord& w : lists.street_suffixes)
    street_suffixes_.insert(ascii_lowered(w.word));
  for (const char* suffix : kUspsSuffixes) street_suffixes_.insert(ascii_lowered(suffix));
  for (const char* code : kTerritories) state_codes_.insert(code);
}

bool ValueRules::matches(Entity entity, std::string_view raw, bool hinted) const {
  const std::string_view cell = trim_ascii(raw);
  if (cell.empty() || !plausible_length(entity, cell)) return false;
  switch (entity) {
    case Entity::kEmail:
      return email_.full_match(cell) &&
             PublicSuffixList::system().has_registrable_domain(cell.substr(cell.rfind('@') + 1));
    case Entity::kCreditDebitCard: {
      const std::string digits = ascii_digits(cell);
      return (card_grouped_.full_match(cell) || card_long_group_.full_match(cell)) &&
             digits.size() >= 12 && digits.size() <= 19 && luhn_valid(digits) &&
             card_brand(digits).has_value();
    }
    case Entity::kSsn:
      return (ssn_dashed_.full_match(cell) || (hinted && ssn_loose_.full_match(cell))) &&
             ssn_valid(cell);
    case Entity::kTaxId:
      return itin_.full_match(cell) && itin_plausible(cell);
    case Entity::kPhoneNumber:
    case Entity::kFaxNumber:
      return phone(cell, hinted);
    case Entity::kIban:
      return iban_valid(cell);
    case Entity::kIpv4:
      return ipv4_valid(cell, false);
    case Entity::kIpv6:
      return ipv6_valid(cell, false);
    case Entity::kMacAddress:
      return mac_valid(cell);
    case Entity::kState:
      return state(cell);
    case Entity::kPostcode:
      return postcode_.full_match(cell) || (hinted && short_zip_.full_match(cell));
    case Entity::kFirstName:
      return name_token_.full_match(cell) && first_names_.count(ascii_lowered(cell));
    case Entity::kLastName:
      return last_name(cell, true);
    case Entity::kName:
      return person_name(cell, true);
    case Entity::kStreetAddress:
      return street_then(cell, street_tail_);
    case Entity::kAddress:
      return address(cell);
    case Entity::kCity: {
      const auto words = split_spaces(cell);
      return hinted && words.size() <= 4 && ascii_digits(cell).empty() &&
             std::all_of(words.begin(), words.end(),
                         [&](std::string_view w) { return name_token_.full_match(w); }) &&
             std::isupper(static_cast<unsigned char>(cell[0]));
    }
    case Entity::kNationalId:
      return hinted && identifier_.full_match(cell) && !ascii_digits(cell).empty();
    case Entity::kUuid:
      return uuid_.full_match(cell) || (hinted && uuid_loose_.full_match(cell));
    case Entity::kUrl: {
      const std::vector<Match> found = url_.find_all(cell);
      if (found.empty() || found[0].groups[0].first < 0) return false;
      const std::size_t host = static_cast<std::size_t>(found[0].groups[0].first);
      const bool marked = host > 0 || ascii_lowered(cell.substr(0, 4)) == "www.";
      return (marked || hinted) &&
             PublicSuffixList::system().has_registrable_domain(
                 cell.substr(host, static_cast<std::size_t>(found[0].groups[0].second) - host));
    }
    case Entity::kDateOfBirth: {
      const auto date = read_date(cell);
      return hinted && date && date->date.year >= 1900 && date->date.year <= 2100;
    }
    case Entity::kPassportNumber:
      return hinted && passport_.full_match(cell);
    case Entity::kDriversLicense:
      return hinted && identifier_.full_match(cell) && ascii_digits(cell).size() >= 4;
  }
  return false;
}

bool ValueRules::name_shaped(Entity entity, std::string_view raw) const {
  const std::string_view cell = trim_ascii(raw);
  switch (entity) {
    case Entity::kFirstName:
      return name_token_.full_match(cell);
    case Entity::kLastName:
      return last_name(cell, false);
    case Entity::kName:
      return person_name(cell, false);
    default:
      return false;
  }
}

bool ValueRules::phone(std::string_view cell, bool hinted) const {
  const std::vector<Match> found = phone_.find_all(cell);
  if (found.empty()) return false;
  if (hinted) return true;
  const auto [begin, end] = found[0].groups[0];
  const std::string_view number =
      cell.substr(static_cast<std::size_t>(begin), static_cast<std::size_t>(end - begin));
  return number.find_first_of("-. ()") != std::string_view::npos &&
         nanp_valid(ascii_digits(number));
}

// 2–4 name tokens, a title before and a suffix after them allowed, or
// "Last, First"; with the dictionary, a known first name first or a known
// last name last.
bool ValueRules::person_name(std::string_view cell, bool use_dictionary) const {
  static const char* const kTitles[] = {"mr.", "mrs.", "ms.", "miss", "dr.",
                                        "mr",  "mrs",  "ms",  "dr"};
  static const char* const kSuffixes[] = {"jr.", "ii",  "iii", "iv",  "v",
                                          "md",  "dds", "phd", "dvm", "jr"};
  std::vector<std::string_view> words;
  const auto comma = cell.find(',');
  if (comma != std::string_view::npos) {  // "Last, First"
    words = split_spaces(cell.substr(comma + 1));
    for (const auto word : split_spaces(cell.substr(0, comma))) words.push_back(word);
  } else {
    words = split_spaces(cell);
  }
  const auto is_one_of = [](std::string_view word, const auto& list) {
    const std::string low = ascii_lowered(word);
    return std::any_of(std::begin(list), std::end(list), [&](const char* w) { return low == w; });
  };
  if (!words.empty() && is_one_of(words.front(), kTitles)) words.erase(words.begin());
  if (words.size() > 2 && is_one_of(words.back(), kSuffixes)) words.pop_back();
  if (words.size() < 2 || words.size() > 4) return false;
  for (const auto word : words)
    if (!name_token_.full_match(word)) return false;
  if (!use_dictionary) return true;
  return first_names_.count(ascii_lowered(words.front())) ||
         last_names_.count(ascii_lowered(words.back()));
}

// One or two name tokens joined by "-" or a space (Wagner-Gomez).
bool ValueRules::last_name(std::string_view cell, bool use_dictionary) const {
  std::vector<std::string_view> parts;
  const auto split = cell.find_first_of("- ");
  if (split == std::string_view::npos) {
    parts = {cell};
  } else {
    parts = {cell.substr(0, split), cell.substr(split + 1)};
    if (parts[1].find_first_of("- ") != std::string_view::npos) return false;
  }
  for (const auto part : parts)
    if (part.empty() || !name_token_.full_match(part)) return false;
  if (!use_dictionary) return true;
  return std::any_of(parts.begin(), parts.end(), [&](std::string_view part) {
    return last_names_.count(ascii_lowered(part)) > 0;
  });
}

bool ValueRules::state(std::string_view cell) const {
  return states_.count(ascii_lowered(cell)) || state_codes_.count(std::string(cell));
}

// The one-line rule, or comma-separated parts of which two or more are a
// street address, a state or a ZIP code.
// Whether `text` is a street address followed by what `tail` matches: some
// word is a street suffix (a full stop or comma after it aside), with a
// street number and up to four words before it.
bool ValueRules::street_then(std::string_view text, const Pattern& tail) const {
  for (const std::string_view word : split_spaces(text)) {
    std::string_view stem = word;
    while (!stem.empty() && (stem.back() == '.' || stem.back() == ',')) stem.remove_suffix(1);
    if (!street_suffixes_.count(ascii_lowered(stem))) continue;
    const auto begin = static_cast<std::size_t>(word.data() - text.data());
    if (street_lead_.full_match(text.substr(0, begin)) &&
        tail.full_match(text.substr(begin + stem.size())))
      return true;
  }
  return false;
}

// Where the state `cell` ends with begins (a name of up to three words, the
// shortest, or a code in any case; a full stop and a ZIP code may follow
// it), or nullopt: the one-line address rule needs one there.
std::optional<std::size_t> ValueRules::state_at_end(std::string_view cell) const {
  std::vector<std::string_view> words = split_spaces(cell);
  if (!words.empty() && postcode_.full_match(words.back())) words.pop_back();
  if (words.empty()) return std::nullopt;
  for (std::string_view& word : words) {  // ",TX" as much as ", TX"
    const auto comma = word.find_last_of(',');
    if (comma != std::string_view::npos) word.remove_prefix(comma + 1);
  }
  std::string last(words.back());
  if (!last.empty() && last.back() == '.') last.pop_back();
  std::string upper = last;
  for (char& c : upper)
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  const auto offset = [&](std::size_t n) {
    return static_cast<std::size_t>(words[words.size() - n].data() - cell.data());
  };
  if (state_codes_.count(upper)) return offset(1);
  std::string name = ascii_lowered(last);
  for (std::size_t n = 1; n <= 3 && n <= words.size(); ++n) {
    if (n > 1) name = ascii_lowered(words[words.size() - n]) + " " + name;
    if (states_.count(name)) return offset(n);
  }
  return std::nullopt;
}

bool ValueRules::address(std::string_view cell) const {
  const std::optional<std::size_t> state_begin = state_at_end(cell);
  if (state_begin && street_then(cell.substr(0, *state_begin), address_middle_)) return true;
  if (cell.find(',') == std::string_view::npos) return false;
  std::size_t parts = 0, known = 0, at = 0;
  while (at <= cell.size()) {
    const std::size_t comma = std::min(cell.find(',', at), cell.size());
    const std::string_view part = trim_ascii(cell.substr(at, comma - at));
    ++parts;
    known += street_then(part, street_tail_) || state(part) || postcode_.full_match(part);
    at = comma + 1;
  }
  return parts >= 2 && known >= 2;
}

}  // namespace nss::pii
