// Free-text scanning: each recognizer on its own format, the context a weak
// one needs, the decoys NSS's and naive patterns flag, overlaps, the header
// as context, and only the entities asked for.
#include "pii/cell_scanner.h"

#include <gtest/gtest.h>

#include "pii/header_hints.h"

namespace nss::pii {
namespace {

struct Found {
  std::string text;
  Entity entity;
  bool operator==(const Found& o) const { return text == o.text && entity == o.entity; }
};

std::ostream& operator<<(std::ostream& os, const Found& f) {
  return os << entity_name(f.entity) << ":'" << f.text << "'";
}

std::vector<Found> scan(const std::string& cell, const std::string& header = "notes") {
  const CellScanner scanner(all_entities(), tokenize_header(header));
  std::vector<Found> out;
  for (const Span& s : scanner.scan(cell))
    out.push_back({cell.substr(s.begin, s.end - s.begin), s.entity});
  return out;
}

using V = std::vector<Found>;

TEST(CellScanner, ValidatedFormats) {
  EXPECT_EQ(scan("write to Ann.Lee@example.co.uk today"),
            (V{{"Ann.Lee@example.co.uk", Entity::kEmail}}));
  EXPECT_EQ(scan("card 4111 1111 1111 1111 expires"),
            (V{{"4111 1111 1111 1111", Entity::kCreditDebitCard}}));
  EXPECT_EQ(scan("ssn 234-56-7891."), (V{{"234-56-7891", Entity::kSsn}}));
  EXPECT_EQ(scan("itin 912-70-1234"), (V{{"912-70-1234", Entity::kTaxId}}));
  EXPECT_EQ(scan("iban DE89 3704 0044 0532 0130 00 thanks"),
            (V{{"DE89 3704 0044 0532 0130 00", Entity::kIban}}));
  EXPECT_EQ(scan("from 192.168.10.4 and fe80::1ff:fe23:4567:890a"),
            (V{{"192.168.10.4", Entity::kIpv4}, {"fe80::1ff:fe23:4567:890a", Entity::kIpv6}}));
  EXPECT_EQ(scan("nic 00:1A:2B:3C:4D:5E up"), (V{{"00:1A:2B:3C:4D:5E", Entity::kMacAddress}}));
  EXPECT_EQ(scan("req 123e4567-e89b-42d3-a456-426614174000 failed"),
            (V{{"123e4567-e89b-42d3-a456-426614174000", Entity::kUuid}}));
  EXPECT_EQ(scan("see https://shop.example.com/u/42?x=1."),
            (V{{"https://shop.example.com/u/42?x=1", Entity::kUrl}}));
}

TEST(CellScanner, PhoneNumbers) {
  EXPECT_EQ(scan("call (415) 555-0134 now"), (V{{"(415) 555-0134", Entity::kPhoneNumber}}));
  EXPECT_EQ(scan("415-555-0134 (fax)"), (V{{"415-555-0134", Entity::kFaxNumber}}));
  EXPECT_EQ(scan("mobile 4155550134"), (V{{"4155550134", Entity::kPhoneNumber}}));
  EXPECT_EQ(scan("id 4155550134"), V{});
  EXPECT_EQ(scan("London office +44 20 7946 0958"),
            (V{{"+44 20 7946 0958", Entity::kPhoneNumber}}));
  EXPECT_EQ(scan("call 555-0199"), V{});
}

TEST(CellScanner, WeakFormatsNeedContext) {
  EXPECT_EQ(scan("order 4111111111111112"), V{});  // fails Luhn
  EXPECT_EQ(scan("ref 4000123456789017"), V{});    // Luhn-valid, no context
  EXPECT_EQ(scan("paid by visa 4000123456789017"),
            (V{{"4000123456789017", Entity::kCreditDebitCard}}));
  EXPECT_EQ(scan("ref 234567891"), V{});
  EXPECT_EQ(scan("my social security number is 234 56 7891"), (V{{"234 56 7891", Entity::kSsn}}));
  EXPECT_EQ(scan("example 123-45-6789"), V{});
  EXPECT_EQ(scan("zip code 02134"), (V{{"02134", Entity::kPostcode}}));
  EXPECT_EQ(scan("won 02134 points"), V{});
  EXPECT_EQ(scan("born 03/15/1990 in Ohio"), (V{{"03/15/1990", Entity::kDateOfBirth}}));
  EXPECT_EQ(scan("released 2023-01-15"), V{});
  EXPECT_EQ(scan("passport number X12345678"), (V{{"X12345678", Entity::kPassportNumber}}));
  EXPECT_EQ(scan("driver's license D123-4567-8901"),
            (V{{"D123-4567-8901", Entity::kDriversLicense}}));
  EXPECT_EQ(scan("part D123-4567-8901"), V{});
}

TEST(CellScanner, Decoys) {
  EXPECT_EQ(scan("version 1.2.3.4"), V{});
  EXPECT_EQ(scan("upgrade to v3.11.7.2"), V{});
  EXPECT_EQ(scan("ISBN 978-3-16-148410-0, total $1,234.56 at 2023-01-15T10:20:30Z"), V{});
  EXPECT_EQ(scan("tracking 1Z999AA10123456784"), V{});
  EXPECT_EQ(scan("3.2260000000000004"), V{});
  EXPECT_EQ(scan("19700101"), V{});
}

TEST(CellScanner, HeaderIsContextAndVetoes) {
  EXPECT_EQ(scan("234567891", "ssn"), (V{{"234567891", Entity::kSsn}}));
  EXPECT_EQ(scan("host 10.0.0.1", "build"), V{});
}

TEST(CellScanner, OnlyTheEntitiesAskedFor) {
  const CellScanner scanner({Entity::kEmail}, {});
  EXPECT_TRUE(scanner.scan("ssn 234-56-7891").empty());
  EXPECT_EQ(scanner.scan("a@example.com 234-56-7891").size(), 1u);
  const CellScanner no_fax({Entity::kPhoneNumber}, {});
  EXPECT_TRUE(no_fax.scan("fax 415-555-0134").empty());
}

TEST(CellScanner, OverlapsKeepTheBestSpan) {
  // The e-mail inside a URL is part of the longer, equally validated URL.
  EXPECT_EQ(scan("https://example.com/?to=a@example.org"),
            (V{{"https://example.com/?to=a@example.org", Entity::kUrl}}));
  // A date of birth's digits are no SSN or postcode.
  EXPECT_EQ(scan("dob 1984-02-29"), (V{{"1984-02-29", Entity::kDateOfBirth}}));
}

TEST(CellScanner, InvalidUtf8IsScannedAroundAsBytes) {
  const std::string cell = "\xff\xfe a@example.com \xc3";
  const auto found = scan(cell);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].text, "a@example.com");
}

}  // namespace
}  // namespace nss::pii
