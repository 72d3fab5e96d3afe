#include "pii/header_hints.h"

#include <algorithm>

#include "pii/pattern.h"

namespace nss::pii {
namespace {

struct HintTerms {
  Entity entity;
  std::vector<std::string_view> terms;
};

// Header words that name an entity (NSS's tokenisation of headers), the
// extras' words included.
const std::vector<HintTerms>& hint_table() {
  static const std::vector<HintTerms> table = {
      {Entity::kFirstName,
       {"firstname", "fname", "givenname", "forename", "prenom", "vorname", "nombre"}},
      {Entity::kLastName, {"lastname", "lname", "surname", "familyname", "nachname", "apellido"}},
      {Entity::kName,
       {"name", "fullname", "customername", "patientname", "personname", "contactname",
        "employeename", "clientname"}},
      {Entity::kStreetAddress,
       {"street", "streetaddress", "address1", "addressline1", "addr1", "addressline",
        "streetname"}},
      {Entity::kCity, {"city", "town", "municipality", "ciudad", "ville", "stadt"}},
      {Entity::kState, {"state", "province", "stateprovince", "stateabbr", "statecode"}},
      {Entity::kPostcode, {"zip", "zipcode", "postal", "postalcode", "postcode", "zip5"}},
      {Entity::kAddress,
       {"address", "addr", "mailingaddress", "homeaddress", "postaladdress", "residence",
        "fulladdress"}},
      {Entity::kPhoneNumber,
       {"phone", "phonenumber", "telephone", "tel", "tele", "mobile", "mobilephone", "cell",
        "cellphone", "cellular", "msisdn", "tollfree", "contactnumber"}},
      {Entity::kFaxNumber, {"fax", "faxnumber", "facsimile"}},
      {Entity::kEmail, {"email", "mail", "emailaddress", "emailaddr", "mailaddress"}},
      {Entity::kSsn, {"ssn", "socialsecurity", "socialsecuritynumber", "socsec", "socialsec"}},
      {Entity::kNationalId,
       {"nationalid", "nationalidentifier", "nin", "nationalnumber", "idnumber", "personalnumber"}},
      {Entity::kTaxId, {"itin", "tin", "taxid", "taxpayerid", "taxpayer", "taxnumber"}},
      {Entity::kCreditDebitCard,
       {"creditcard", "debitcard", "cardnumber", "cardno", "ccnumber", "cc", "ccnum", "pan", "visa",
        "mastercard", "amex", "creditcardnumber"}},
      {Entity::kIban, {"iban"}},
      {Entity::kIpv4,
       {"ip", "ipaddress", "ipaddr", "ipv4", "clientip", "remoteaddr", "sourceip", "srcip",
        "dstip"}},
      {Entity::kIpv6,
       {"ip", "ipaddress", "ipaddr", "ipv6", "clientip", "remoteaddr", "sourceip", "srcip",
        "dstip"}},
      {Entity::kMacAddress, {"mac", "macaddress", "hwaddr", "hardwareaddress"}},
      {Entity::kUuid, {"uuid", "guid"}},
      {Entity::kUrl, {"url", "website", "link", "homepage", "weburl", "webpage"}},
      {Entity::kDateOfBirth, {"dob", "birthdate", "dateofbirth", "birthday", "birthdt"}},
      {Entity::kPassportNumber, {"passport", "passportno", "passportnumber", "passportnum"}},
      {Entity::kDriversLicense,
       {"license", "licence", "driverslicense", "driverlicense", "driverslicence", "driverlicence",
        "dl", "dlnumber", "dlno", "licenseno", "licensenumber"}},
  };
  return table;
}

bool contains(const std::vector<std::string>& tokens, std::string_view token) {
  return std::find(tokens.begin(), tokens.end(), token) != tokens.end();
}

// Every run of consecutive tokens written together, the single tokens included.
std::vector<std::string> token_runs(const std::vector<std::string>& tokens) {
  std::vector<std::string> runs;
  for (std::size_t first = 0; first < tokens.size(); ++first) {
    std::string run;
    for (std::size_t last = first; last < tokens.size(); ++last)
      runs.push_back(run += tokens[last]);
  }
  return runs;
}

bool is_upper(char c) {
  return c >= 'A' && c <= 'Z';
}

bool is_lower(char c) {
  return c >= 'a' && c <= 'z';
}

// "homePhone" -> home, Phone; "HTTPServer" -> HTTP, Server; "zip5" stays.
void split_camel_case(std::string_view word, std::vector<std::string>& out) {
  std::size_t begin = 0;
  for (std::size_t i = 1; i < word.size(); ++i) {
    const bool lower_to_upper = is_lower(word[i - 1]) && is_upper(word[i]);
    const bool acronym_end =
        is_upper(word[i - 1]) && is_upper(word[i]) && i + 1 < word.size() && is_lower(word[i + 1]);
    if (lower_to_upper || acronym_end) {
      out.emplace_back(word.substr(begin, i - begin));
      begin = i;
    }
  }
  out.emplace_back(word.substr(begin));
}

}  // namespace

std::vector<std::string> tokenize_header(std::string_view header) {
  static const Pattern kWord("(?!\\d)\\w+", 0, "header word");
  const std::string separated = [&] {
    std::string text(header);
    std::replace(text.begin(), text.end(), '_', '-');
    return text;
  }();
  std::vector<std::string> tokens;
  for (const Match& match : kWord.find_all(separated))
    split_camel_case(std::string_view(separated).substr(match.begin, match.end - match.begin),
                     tokens);
  for (std::string& token : tokens)
    for (char& c : token)
      if (is_upper(c)) c = static_cast<char>(c - 'A' + 'a');
  return tokens;
}

std::vector<Entity> header_hints(std::string_view header) {
  const std::vector<std::string> tokens = tokenize_header(header);
  const std::vector<std::string> runs = token_runs(tokens);
  std::vector<Entity> hints;
  for (const HintTerms& row : hint_table()) {
    const bool named = std::any_of(row.terms.begin(), row.terms.end(),
                                   [&](std::string_view term) { return contains(runs, term); });
    if (named && !header_vetoes(header, row.entity)) hints.push_back(row.entity);
  }
  return hints;
}

bool header_vetoes(std::string_view header, Entity entity) {
  static const std::vector<std::string_view> kIpVetoes = {"ver", "version", "versions", "release",
                                                          "build"};
  static const std::vector<std::string_view> kCardVetoes = {
      "order", "invoice", "sku", "isbn", "upc", "ean", "imei", "serial", "tracking"};
  static const std::vector<std::string_view> kStateVetoes = {"status", "statement"};
  // A product's or a user's name is no person's.
  static const std::vector<std::string_view> kPersonVetoes = {"company", "product", "file", "user",
                                                              "host",    "domain",  "brand"};
  const bool person =
      entity == Entity::kName || entity == Entity::kFirstName || entity == Entity::kLastName;
  const std::vector<std::string_view>* vetoes = entity == Entity::kIpv4 || entity == Entity::kIpv6
                                                    ? &kIpVetoes
                                                : entity == Entity::kCreditDebitCard ? &kCardVetoes
                                                : entity == Entity::kState           ? &kStateVetoes
                                                : person ? &kPersonVetoes
                                                         : nullptr;
  if (!vetoes) return false;
  const std::vector<std::string> tokens = tokenize_header(header);
  return std::any_of(vetoes->begin(), vetoes->end(),
                     [&](std::string_view veto) { return contains(tokens, veto); });
}

}  // namespace nss::pii
