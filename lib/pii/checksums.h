// Check-digit and range validators of numbers that identify a person or an
// account. Where python-stdnum (Debian's 1.18) has the number, the verdict
// is stdnum's on every input, its quirks included (tests/pii/
// test_validators_stdnum.py compares them). Validators never throw; text
// that is not valid UTF-8 is never valid.
#pragma once

#include <optional>
#include <string_view>

namespace nss::pii {

/// stdnum.luhn.is_valid: a non-empty string of ASCII digits whose Luhn
/// checksum is 0. No separators, no whitespace, any length ("0" is valid).
bool luhn_valid(std::string_view text);

/// The digit that makes `digits` + it pass luhn_valid (stdnum's
/// luhn.calc_check_digit); `digits` must be ASCII digits (InternalError).
char luhn_check_digit(std::string_view digits);

/// stdnum.us.ssn.is_valid: 9 digits, optionally as AAA-GG-SSSS, after
/// stdnum's clean and strip; not area 000, 666 or 9xx, group 00 or serial
/// 0000; not one of the three advertised SSNs when written as stdnum's
/// format() sees them (so " 078-05-1120", padded, is valid, as in stdnum).
bool ssn_valid(std::string_view text);

/// stdnum.us.itin.is_valid: the same shape as an SSN, area 9xx, group
/// 70–88, 90–92 or 94–99.
bool itin_valid(std::string_view text);

/// itin_valid, with the groups 50–65 that Presidio also accepts.
bool itin_plausible(std::string_view text);

/// stdnum.us.rtn.is_valid: an ABA routing number, 9 digits after clean and
/// strip, 7·(d1+d4+d7) + 3·(d2+d5+d8) + 9·(d3+d6) ≡ d9 (mod 10).
bool aba_valid(std::string_view text);

/// stdnum.gb.nhs.is_valid: a UK NHS number, 10 digits after removing spaces
/// and hyphens, Σ i·d_i over the digits from the right ≡ 0 (mod 11).
bool nhs_valid(std::string_view text);

/// A dialable North American number: exactly 10 ASCII digits, area code and
/// exchange each [2-9]xx and not [2-9]11.
bool nanp_valid(std::string_view digits10);

enum class CardBrand { kVisa, kMastercard, kAmex, kDiscover, kDiners, kJcb, kUnionPay, kMaestro };

/// The brand whose issuer prefixes and lengths `digits` (ASCII digits only)
/// fit, the first in checksums.cpp's table (Faker's prefixes and the public
/// IIN ranges), or nullopt when none does.
std::optional<CardBrand> card_brand(std::string_view digits);

}  // namespace nss::pii
