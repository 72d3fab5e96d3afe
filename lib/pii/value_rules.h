// Whole-cell value rules of the column classifier: whether one trimmed cell
// is a value of an entity, by shape and, where the entity has one, by its
// validator (Luhn and the IIN table, mod 97, the SSN and ITIN ranges, the
// North American numbering plan, Python's ipaddress, the Public Suffix
// List) or Faker's word lists (names, street suffixes, states). A rule that
// only a header can make meaningful (a 5-digit count is no postcode, a date
// is no birth date) answers only when `hinted`.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>

#include "pii/entity.h"
#include "pii/pattern.h"
#include "pii/word_lists.h"

namespace nss::pii {

class ValueRules {
 public:
  /// The rules with the names, street suffixes and states of `lists`.
  explicit ValueRules(const WordLists& lists);

  /// Whether `cell` (ASCII whitespace around it ignored) as a whole is a
  /// value of `entity`; `hinted`: the header names the entity. Phone and fax
  /// numbers share one rule.
  bool matches(Entity entity, std::string_view cell, bool hinted) const;

  /// For first_name, last_name and name: whether `cell` has the shape of one
  /// (capitalized, all-caps or all-lowercase name tokens, 1, 1–2 and 2–4 of
  /// them), dictionary aside; false for other entities.
  bool name_shaped(Entity entity, std::string_view cell) const;

 private:
  bool phone(std::string_view cell, bool hinted) const;
  bool person_name(std::string_view cell, bool use_dictionary) const;
  bool last_name(std::string_view cell, bool use_dictionary) const;
  bool state(std::string_view cell) const;
  bool address(std::string_view cell) const;
  bool street_then(std::string_view text, const Pattern& tail) const;
  std::optional<std::size_t> state_at_end(std::string_view cell) const;

  std::unordered_set<std::string> first_names_, last_names_, states_, state_codes_,
      street_suffixes_;
  Pattern email_, card_grouped_, card_long_group_, ssn_dashed_, ssn_loose_, itin_, phone_,
      postcode_, short_zip_, name_token_, street_lead_, street_tail_, address_middle_, url_, uuid_,
      uuid_loose_, passport_, identifier_;
};

/// `text` without the ASCII whitespace around it.
std::string_view trim_ascii(std::string_view text);

}  // namespace nss::pii
