// The canonical form of a personal value: what makes two spellings of it
// the same value ("(555) 123-4567" and "555.123.4567"; " Ann@X.org" and
// "ann@x.org"), so that it gets the same surrogate and the same keyed hash
// wherever it appears.
#pragma once

#include <string>
#include <string_view>

#include "pii/entity.h"

namespace nss::pii {

/// The canonical form of `value` as a value of `entity`:
///   email                       trimmed, ASCII-lowercased
///   phone and fax numbers       the digits, without a leading 1 of 11
///   ssn, national_id, tax_id,
///   passport and licence numbers letters and digits, uppercased
///   card numbers, postcodes     the digits
///   iban                        the compact form
///   ipv6                        lowercased; mac addresses and UUIDs: their hex digits, lowercased
///   url                         trimmed, scheme and host lowercased
///   date_of_birth               YYYY-MM-DD when pii/dates.h reads it, else as names
///   names and places, ipv4      trimmed, whitespace runs one space, ASCII-lowercased
std::string canonical_value(Entity entity, std::string_view value);

}  // namespace nss::pii
