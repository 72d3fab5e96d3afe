#include "labelled_table.h"

#include <cstdio>
#include <functional>
#include <random>

#include "pii/checksums.h"
#include "pii/iban.h"

namespace nss::pii {
namespace {

class Draw {
 public:
  explicit Draw(std::uint64_t seed) : rng_(seed) {}
  std::uint64_t below(std::uint64_t n) { return rng_() % n; }
  bool chance(double p) { return static_cast<double>(below(1000000)) < p * 1e6; }
  std::string digits(int count) {
    std::string out;
    for (int i = 0; i < count; ++i) out.push_back(static_cast<char>('0' + below(10)));
    return out;
  }
  std::string number(std::uint64_t low, std::uint64_t high, int width) {
    char text[24];
    std::snprintf(text, sizeof text, "%0*llu", width,
                  static_cast<unsigned long long>(low + below(high - low + 1)));
    return text;
  }
  template <typename T>
  const T& pick(const std::vector<T>& items) {
    return items[below(items.size())];
  }

 private:
  std::mt19937_64 rng_;  // its output sequence is fixed by the standard
};

std::string word(Draw& d, const std::vector<WeightedWord>& words) {
  return d.pick(words).word;
}

std::string nanp(Draw& d) {
  const auto part = [&] {
    for (;;) {
      std::string p = d.number(200, 999, 3);
      if (p.substr(1) != "11") return p;
    }
  };
  return part() + part() + d.number(0, 9999, 4);
}

std::string phone(Draw& d) {
  const std::string n = nanp(d);
  const std::string a = n.substr(0, 3), b = n.substr(3, 3), c = n.substr(6);
  switch (d.below(6)) {
    case 0:
      return "(" + a + ") " + b + "-" + c;
    case 1:
      return a + "-" + b + "-" + c;
    case 2:
      return a + "." + b + "." + c;
    case 3:
      return "+1-" + a + "-" + b + "-" + c;
    case 4:
      return "+1 (" + a + ") " + b + "-" + c;
    default:
      return a + "-" + b + "-" + c + " x" + d.digits(3);
  }
}

std::string ssn(Draw& d) {
  for (;;) {
    const std::string area = d.number(1, 899, 3);
    if (area == "666") continue;
    const std::string out = area + "-" + d.number(1, 99, 2) + "-" + d.number(1, 9999, 4);
    if (ssn_valid(out) && out.rfind("123-45-6789", 0) != 0) return out;
  }
}

std::string itin(Draw& d) {
  static const std::vector<int> kGroups = {70, 75, 78, 80, 84, 88, 90, 92, 94, 99};
  return "9" + d.digits(2) + "-" + std::to_string(d.pick(kGroups)) + "-" + d.digits(4);
}

std::string luhn_number(Draw& d, const std::string& prefix, int length) {
  std::string body = prefix + d.digits(length - 1 - static_cast<int>(prefix.size()));
  return body + luhn_check_digit(body);
}

std::string card(Draw& d, bool grouped) {
  static const std::vector<std::pair<std::string, int>> kBrands = {
      {"4", 16}, {"51", 16}, {"55", 16}, {"2221", 16}, {"34", 15}, {"37", 15}, {"6011", 16}};
  const auto& [prefix, length] = d.pick(kBrands);
  const std::string n = luhn_number(d, prefix, length);
  if (!grouped) return n;
  const std::string sep = d.chance(0.5) ? " " : "-";
  if (length == 15) return n.substr(0, 4) + sep + n.substr(4, 6) + sep + n.substr(10);
  return n.substr(0, 4) + sep + n.substr(4, 4) + sep + n.substr(8, 4) + sep + n.substr(12);
}

std::string iban(Draw& d) {
  static const std::vector<std::string> kCountries = {"DE", "GB", "FR", "NL", "ES", "IT", "CH"};
  const IbanCountry* country = iban_country(d.pick(kCountries));
  std::string bban;
  for (const BbanField& field : country->fields)
    for (int i = 0; i < field.count; ++i)
      bban.push_back(field.characters == BbanCharacters::kDigits
                         ? static_cast<char>('0' + d.below(10))
                         : static_cast<char>('A' + d.below(26)));
  const std::string compact =
      std::string(country->code) + iban_check_digits(country->code, bban) + bban;
  if (d.chance(0.5)) return compact;
  std::string spaced;
  for (std::size_t i = 0; i < compact.size(); ++i)
    spaced += (i && i % 4 == 0 ? " " : "") + std::string(1, compact[i]);
  return spaced;
}

std::string ipv4(Draw& d) {
  return std::to_string(1 + d.below(223)) + "." + std::to_string(d.below(256)) + "." +
         std::to_string(d.below(256)) + "." + std::to_string(1 + d.below(254));
}

std::string hex(Draw& d, int count, bool upper = false) {
  const char* digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
  std::string out;
  for (int i = 0; i < count; ++i) out.push_back(digits[d.below(16)]);
  return out;
}

std::string ipv6(Draw& d) {
  if (d.chance(0.5)) return "2001:db8::" + hex(d, 1 + static_cast<int>(d.below(4)));
  std::string out = "fe80";
  for (int i = 0; i < 7; ++i) out += ":" + hex(d, 1 + static_cast<int>(d.below(4)));
  return out;
}

std::string mac(Draw& d) {
  const bool upper = d.chance(0.5);
  const std::string sep = d.chance(0.5) ? ":" : "-";
  std::string out = hex(d, 2, upper);
  for (int i = 0; i < 5; ++i) out += sep + hex(d, 2, upper);
  return out;
}

std::string uuid(Draw& d) {
  return hex(d, 8) + "-" + hex(d, 4) + "-4" + hex(d, 3) + "-" + std::string(1, "89ab"[d.below(4)]) +
         hex(d, 3) + "-" + hex(d, 12);
}

std::string lower(std::string text) {
  for (char& c : text)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return text;
}

std::string url(Draw& d, const WordLists& lists) {
  static const std::vector<std::string> kTlds = {"com", "org", "net", "io", "co.uk", "de"};
  std::string out = d.chance(0.7) ? "https://" : "http://";
  if (d.chance(0.5)) out += "www.";
  out += lower(word(d, lists.last_names)) + "." + d.pick(kTlds);
  const std::uint64_t segments = d.below(3);
  for (std::uint64_t i = 0; i < segments; ++i) out += "/" + lower(word(d, lists.first_names_male));
  if (d.chance(0.2)) out += "?id=" + d.digits(4);
  return out;
}

std::string date(Draw& d, int format, int first_year, int years) {
  static const int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const int year = first_year + static_cast<int>(d.below(static_cast<std::uint64_t>(years)));
  const int month = 1 + static_cast<int>(d.below(12));
  const int day = 1 + static_cast<int>(d.below(static_cast<std::uint64_t>(kDays[month - 1])));
  char text[48];
  switch (format) {
    case 0:
      std::snprintf(text, sizeof text, "%04d-%02d-%02d", year, month, day);
      break;
    case 1:
      std::snprintf(text, sizeof text, "%02d/%02d/%04d", month, day, year);
      break;
    default:
      std::snprintf(text, sizeof text, "%02d.%02d.%04d", day, month, year);
      break;
  }
  return text;
}

std::string passport(Draw& d) {
  return d.chance(0.5) ? std::string(1, static_cast<char>('A' + d.below(26))) + d.digits(8)
                       : d.number(100000000, 999999999, 9);
}

std::string licence(Draw& d) {
  const std::string letter(1, static_cast<char>('A' + d.below(26)));
  return d.chance(0.5) ? letter + d.digits(7)
                       : letter + d.digits(3) + "-" + d.digits(4) + "-" + d.digits(4);
}

std::string first_name(Draw& d, const WordLists& lists) {
  return word(d, d.chance(0.5) ? lists.first_names_female : lists.first_names_male);
}

std::string full_name(Draw& d, const WordLists& lists) {
  std::string name = first_name(d, lists) + " " + word(d, lists.last_names);
  if (d.chance(0.03)) name = "Dr. " + name;
  if (d.chance(0.02)) name += " Jr.";
  return name;
}

std::string street(Draw& d, const WordLists& lists) {
  static const std::vector<std::string> kSuffixes = {"Street", "St",   "Avenue", "Ave",   "Road",
                                                     "Blvd",   "Lane", "Drive",  "Court", "Way"};
  std::string out = d.number(1, 9999, 1) + " " + word(d, lists.last_names) + " " +
                    (d.chance(0.5) ? d.pick(kSuffixes) : word(d, lists.street_suffixes));
  if (d.chance(0.1)) out += " Apt. " + d.digits(3);
  return out;
}

std::string city(Draw& d, const WordLists& lists) {
  return d.chance(0.5) ? word(d, lists.city_prefixes) + " " + first_name(d, lists)
                       : word(d, lists.last_names) + word(d, lists.city_suffixes);
}

std::string zip(Draw& d) {
  return d.number(501, 99950, 5) + (d.chance(0.2) ? "-" + d.digits(4) : "");
}

std::string address(Draw& d, const WordLists& lists) {
  return street(d, lists) + ", " + city(d, lists) + ", " + word(d, lists.states_abbr) + " " +
         zip(d);
}

std::string email(Draw& d, const WordLists& lists) {
  static const std::vector<std::string> kDomains = {"example.com", "example.org", "mail.co.uk",
                                                    "corp.io", "uni.edu"};
  return lower(first_name(d, lists)) + (d.chance(0.5) ? "." : "_") +
         lower(word(d, lists.last_names)) + d.digits(2) + "@" + d.pick(kDomains);
}

// A 16-digit number that fails Luhn (an order id); one in ten passes.
std::string order_id(Draw& d) {
  const std::string body = "4" + d.digits(14);
  const char check = luhn_check_digit(body);
  if (d.chance(0.1)) return body + check;
  return body + static_cast<char>('0' + (check - '0' + 1 + d.below(9)) % 10);
}

std::string version(Draw& d) {
  const std::string v = std::to_string(d.below(12)) + "." + std::to_string(d.below(20)) + "." +
                        std::to_string(d.below(20));
  return d.chance(0.5) ? v + "." + std::to_string(d.below(10)) : (d.chance(0.5) ? "v" : "") + v;
}

std::string isbn(Draw& d) {
  return "978-" + d.digits(1) + "-" + d.digits(2) + "-" + d.digits(6) + "-" + d.digits(1);
}

std::string timestamp(Draw& d) {
  return date(d, 0, 2015, 10) + "T" + d.number(0, 23, 2) + ":" + d.number(0, 59, 2) + ":" +
         d.number(0, 59, 2) + "Z";
}

std::string price(Draw& d) {
  return "$" + std::to_string(1 + d.below(9)) + "," + d.digits(3) + "." + d.digits(2);
}

std::string tracking(Draw& d) {
  return "1Z" + d.digits(3) + "AA" + d.digits(11);
}

struct Fragment {
  std::string before;
  std::function<std::string(Draw&)> value;
  std::string after;
  std::optional<Entity> entity;  // nullopt: a decoy, no PII in it
};

std::vector<Fragment> note_fragments(const WordLists& lists) {
  const auto with = [&](auto f) { return [&lists, f](Draw& d) { return f(d, lists); }; };
  return {
      {"Customer wrote from ", with(email), " about a refund.", Entity::kEmail},
      {"Call me at ", phone, " after 5pm.", Entity::kPhoneNumber},
      {"Please fax the form to ", phone, " today.", Entity::kFaxNumber},
      {"Paid with ", [](Draw& d) { return card(d, true); }, ".", Entity::kCreditDebitCard},
      {"Charged to visa ", [](Draw& d) { return card(d, false); }, " twice.",
       Entity::kCreditDebitCard},
      {"SSN on file: ", ssn, ".", Entity::kSsn},
      {"ticket ", ssn, " reopened.", Entity::kSsn},  // a dashed, valid SSN counts, by design
      {"ITIN ", itin, " was verified.", Entity::kTaxId},
      {"Wire the money to ", iban, " by Friday.", Entity::kIban},
      {"Login from ", ipv4, " at night.", Entity::kIpv4},
      {"Peer ", ipv6, " dropped the session.", Entity::kIpv6},
      {"Device ", mac, " joined the network.", Entity::kMacAddress},
      {"Request ", uuid, " failed twice.", Entity::kUuid},
      {"See ", with(url), " for details.", Entity::kUrl},
      {"Ship to zip code ", zip, " please.", Entity::kPostcode},
      {"Born on ", [](Draw& d) { return date(d, static_cast<int>(d.below(3)), 1940, 65); },
       ", per the form.", Entity::kDateOfBirth},
      {"Passport number ", passport, " expires next year.", Entity::kPassportNumber},
      {"Driver's license ", licence, " on file.", Entity::kDriversLicense},
      {"Order ", order_id, " shipped.", std::nullopt},
      {"ref ", [](Draw& d) { return luhn_number(d, "4", 16); }, " noted.", std::nullopt},
      {"Upgraded to version ", version, ".", std::nullopt},
      {"Released ", [](Draw& d) { return date(d, 0, 2015, 10); }, " to all users.", std::nullopt},
      {"Example value ", [](Draw&) { return std::string("123-45-6789"); }, " from the docs.",
       std::nullopt},
      {"Call ", [](Draw& d) { return "555-0" + d.digits(3); }, " for the lab.", std::nullopt},
      {"ISBN ", isbn, " costs more now.", std::nullopt},
      {"Total ", price, " due.", std::nullopt},
      {"Tracking ", tracking, " in transit.", std::nullopt},
      {"Logged at ", timestamp, ".", std::nullopt},
      {"", [](Draw& d) { return d.digits(5); }, " items in stock.", std::nullopt},
      {"Invoice ", [](Draw& d) { return d.number(100000000, 899999999, 9); }, " paid.",
       std::nullopt},
      {"Build ", [](Draw& d) { return "10.0.0." + std::to_string(d.below(200)); }, " deployed.",
       std::nullopt},
      {"IMEI ", [](Draw& d) { return luhn_number(d, "35", 15); }, " replaced.", std::nullopt},
  };
}

LabelledColumn notes(std::size_t rows, const WordLists& lists, Draw& d) {
  const std::vector<Fragment> fragments = note_fragments(lists);
  LabelledColumn column{"notes", std::nullopt, {}, {}};
  for (std::size_t r = 0; r < rows; ++r) {
    std::string cell;
    std::vector<LabelledSpan> spans;
    const std::uint64_t parts = 1 + d.below(2);
    for (std::uint64_t p = 0; p < parts; ++p) {
      const Fragment& f = fragments[d.below(fragments.size())];
      if (!cell.empty()) cell += " ";
      cell += f.before;
      const std::string value = f.value(d);
      if (f.entity) spans.push_back({cell.size(), cell.size() + value.size(), *f.entity});
      cell += value + f.after;
    }
    column.cells.push_back(cell);
    column.spans.push_back(spans);
  }
  return column;
}

}  // namespace

std::vector<LabelledColumn> labelled_table(std::size_t rows, const WordLists& lists) {
  Draw d(36);
  const auto from = [&](auto f) { return [&lists, f](Draw& draw) { return f(draw, lists); }; };
  const std::vector<
      std::tuple<std::string, std::optional<Entity>, std::function<std::string(Draw&)>>>
      specs = {
          {"first_name", Entity::kFirstName, from(first_name)},
          {"Surname", Entity::kLastName, [&](Draw& draw) { return word(draw, lists.last_names); }},
          {"customer_name", Entity::kName, from(full_name)},
          {"email", Entity::kEmail, from(email)},
          {"phone", Entity::kPhoneNumber, phone},
          {"fax", Entity::kFaxNumber, phone},
          {"ssn", Entity::kSsn, ssn},
          {"tin", Entity::kTaxId, itin},
          {"card_number", Entity::kCreditDebitCard,
           [](Draw& draw) { return card(draw, draw.chance(0.5)); }},
          {"street", Entity::kStreetAddress, from(street)},
          {"city", Entity::kCity, from(city)},
          {"state", Entity::kState,
           [&](Draw& draw) {
             return word(draw, draw.chance(0.5) ? lists.states : lists.states_abbr);
           }},
          {"zip", Entity::kPostcode, zip},
          {"mailing_address", Entity::kAddress, from(address)},
          {"iban", Entity::kIban, iban},
          {"client_ip", Entity::kIpv4, ipv4},
          {"ipv6_address", Entity::kIpv6, ipv6},
          {"mac", Entity::kMacAddress, mac},
          {"guid", Entity::kUuid, uuid},
          {"website", Entity::kUrl, from(url)},
          {"date_of_birth", Entity::kDateOfBirth,
           [](Draw& draw) { return date(draw, 1, 1940, 65); }},
          {"passport_no", Entity::kPassportNumber, passport},
          {"drivers_license", Entity::kDriversLicense, licence},
          {"national_id", Entity::kNationalId,
           [](Draw& draw) {
             return draw.chance(0.5)
                        ? "QQ " + draw.digits(2) + " " + draw.digits(2) + " " + draw.digits(2) +
                              " C"
                        : std::string(1, static_cast<char>('A' + draw.below(26))) + draw.digits(7);
           }},
          {"order_id", std::nullopt, order_id},
          {"imei", std::nullopt, [](Draw& draw) { return luhn_number(draw, "35", 15); }},
          {"event_date", std::nullopt,
           [](Draw& draw) {
             return draw.chance(0.2)
                        ? date(draw, 0, 2000, 25).erase(4, 1).erase(6, 1) + draw.digits(1)
                        : date(draw, static_cast<int>(draw.below(3)), 2000, 25);
           }},
          {"version", std::nullopt, version},
          {"product_name", std::nullopt,
           [&](Draw& draw) {
             static const std::vector<std::string> kWords = {"Tower", "Air", "Max", "Pro", "Blue"};
             return (draw.chance(0.5) ? first_name(draw, lists) : draw.pick(kWords)) + " " +
                    draw.pick(kWords);
           }},
          {"sku", std::nullopt, [](Draw& draw) { return draw.number(100000000, 665999999, 9); }},
          {"units_sold", std::nullopt, [](Draw& draw) { return draw.digits(5); }},
          {"hex_id", std::nullopt, [](Draw& draw) { return hex(draw, 32); }},
          {"price", std::nullopt, price},
          {"tracking_number", std::nullopt, tracking},
          {"created_at", std::nullopt, timestamp},
          {"isbn", std::nullopt, isbn},
      };
  std::vector<LabelledColumn> table;
  for (const auto& [header, entity, make] : specs) {
    LabelledColumn column{header, entity, {}, {}};
    for (std::size_t r = 0; r < rows; ++r)
      column.cells.push_back(d.chance(0.03) ? (d.chance(0.5) ? "" : "NaN") : make(d));
    table.push_back(std::move(column));
  }
  table.push_back(notes(3 * rows, lists, d));  // free text: 3 cells a row, for enough spans
  return table;
}

}  // namespace nss::pii
