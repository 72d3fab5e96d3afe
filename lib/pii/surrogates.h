// One surrogate of a personal value, drawn from a keyed stream: a value of
// the same entity and, where the entity has one, the same shape — digits
// replaced in place with every separator kept (phone numbers, SSNs, card
// numbers, IBANs, postcodes), the case style of names kept — and valid
// where validity is checkable (a Luhn-valid card of the same brand and
// length, a mod-97-valid IBAN of the same country, an SSN or ITIN in the
// issued ranges, a dialable North American number). Names, streets and
// cities come from Faker's word lists; e-mail addresses use the reserved
// example.com/.net/.org domains, IPv4 addresses the private 10/8 network,
// IPv6 the unique-local fd00::/8, MAC addresses the locally administered
// range, URLs the reserved example.com: a surrogate never names a real
// mailbox, host or device. UUIDs are fresh version-4 ones; a date of birth
// moves by up to three years, written as it was; passport and licence
// numbers keep their format, letter for letter and digit for digit.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "pii/entity.h"
#include "pii/keyed_hash.h"
#include "pii/word_lists.h"

namespace nss::pii {

/// A keyed bijection of the state names, and one of the postal codes, that
/// maps no state to itself: a state column keeps its counts and never its
/// values.
class StatePermutation {
 public:
  StatePermutation(const PiiKey& key, const WordLists& lists);
  /// The state `value` (a name or a code, any case) maps to, as the list
  /// spells it; nullopt for a value that is no state.
  std::optional<std::string> next(std::string_view value) const;

 private:
  std::map<std::string, std::string> next_;  // lowercased state -> its image
};

/// What surrogates are drawn from besides the stream.
struct SurrogateSources {
  const WordLists& lists;
  const StatePermutation& states;
};

/// A surrogate of `original` (an `entity` value) from `stream`'s draws.
std::string draw_surrogate(Entity entity, std::string_view original, KeyedStream& stream,
                           const SurrogateSources& sources);

}  // namespace nss::pii
