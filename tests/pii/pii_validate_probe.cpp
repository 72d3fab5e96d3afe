// pii_validate_probe: lib/pii's validators for test_validators_stdnum.py.
//   pii_validate_probe                 reads "NAME HEX" lines on stdin (HEX:
//                                      the value's bytes, any bytes) and
//                                      prints one answer line for each
//   pii_validate_probe --iban-registry prints "CC STRUCTURE" per country
// NAME is a validator (luhn iban ssn itin aba nhs mac ipv4 ipv4_interface
// ipv6 ipv6_interface: prints 1 or 0), a transform (clean strip upper
// iban_compact: prints the result as hex), decimal (the python_decimal_value
// of each code point, comma-separated) or a check-digit calculation
// (luhn_check of digits, iban_check of the country and BBAN).
#include <cstdio>
#include <functional>
#include <iostream>
#include <map>
#include <string>

#include "core/utf8.h"
#include "pii/checksums.h"
#include "pii/iban.h"
#include "pii/network.h"
#include "pii/unicode_clean.h"

namespace {

using namespace nss::pii;

std::string from_hex(const std::string& hex) {
  std::string bytes;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) {
    bytes.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  }
  return bytes;
}

std::string to_hex(std::string_view bytes) {
  static const char* digits = "0123456789abcdef";
  std::string hex;
  for (unsigned char c : bytes) {
    hex.push_back(digits[c >> 4]);
    hex.push_back(digits[c & 15]);
  }
  return hex;
}

std::string decimal_values(std::string_view text) {
  std::string out;
  for (char32_t cp : nss::decode_utf8_lossy(text)) {
    out += (out.empty() ? "" : ",") + std::to_string(python_decimal_value(cp));
  }
  return out;
}

using Answer = std::function<std::string(const std::string&)>;

Answer verdict(bool (*validator)(std::string_view)) {
  return [validator](const std::string& value) { return validator(value) ? "1" : "0"; };
}

Answer ip_verdict(bool (*validator)(std::string_view, bool), bool allow_prefix) {
  return [validator, allow_prefix](const std::string& value) {
    return validator(value, allow_prefix) ? "1" : "0";
  };
}

const std::map<std::string, Answer>& answers() {
  static const std::map<std::string, Answer> table = {
      {"luhn", verdict(luhn_valid)},
      {"iban", verdict(iban_valid)},
      {"ssn", verdict(ssn_valid)},
      {"itin", verdict(itin_valid)},
      {"aba", verdict(aba_valid)},
      {"nhs", verdict(nhs_valid)},
      {"mac", verdict(stdnum_mac_valid)},
      {"ipv4", ip_verdict(ipv4_valid, false)},
      {"ipv4_interface", ip_verdict(ipv4_valid, true)},
      {"ipv6", ip_verdict(ipv6_valid, false)},
      {"ipv6_interface", ip_verdict(ipv6_valid, true)},
      {"clean", [](const std::string& v) { return to_hex(stdnum_clean(v, "")); }},
      {"strip", [](const std::string& v) { return to_hex(python_strip(v)); }},
      {"upper", [](const std::string& v) { return to_hex(python_upper_ascii(v)); }},
      {"iban_compact", [](const std::string& v) { return to_hex(iban_compact(v)); }},
      {"decimal", decimal_values},
      {"luhn_check", [](const std::string& v) { return std::string(1, luhn_check_digit(v)); }},
      {"iban_check",
       [](const std::string& v) { return iban_check_digits(v.substr(0, 2), v.substr(2)); }},
  };
  return table;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::string(argv[1]) == "--iban-registry") {
    for (const IbanCountry& country : iban_countries()) {
      std::printf("%s %s\n", std::string(country.code).c_str(),
                  std::string(country.structure).c_str());
    }
    return 0;
  }
  if (argc != 1) {
    std::fprintf(stderr, "usage: pii_validate_probe [--iban-registry] < NAME-HEX-LINES\n");
    return 2;
  }
  std::string line;
  while (std::getline(std::cin, line)) {
    const std::size_t space = line.find(' ');
    const auto answer = answers().find(line.substr(0, space));
    if (answer == answers().end()) {
      std::fprintf(stderr, "pii_validate_probe: unknown name in line '%s'\n", line.c_str());
      return 2;
    }
    const std::string value = space == std::string::npos ? "" : from_hex(line.substr(space + 1));
    std::cout << answer->second(value) << '\n';
  }
  return 0;
}
