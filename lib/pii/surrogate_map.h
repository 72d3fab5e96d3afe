// Consistent replacement across a table: a value gets the same surrogate in
// every row and column of its entity (a pure function of the key, the entity
// and the value's canonical form, so also across tables prepared with the
// same key), no surrogate equals its original, and within a table no two
// values share one. A draw that equals its original or is taken is drawn
// again from the next keyed attempt.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "pii/surrogates.h"

namespace nss::pii {

class SurrogateMap {
 public:
  SurrogateMap(const PiiKey& key, const WordLists& lists);

  /// The surrogate of `original` as a value of `entity`, in its shape.
  std::string surrogate(Entity entity, std::string_view original);

  struct Counts {
    std::size_t distinct = 0;             // values replaced
    std::size_t collisions_resolved = 0;  // values drawn again
    std::size_t collisions_kept = 0;      // values whose last draw stayed taken
  };
  const std::map<Entity, Counts>& counts() const { return counts_; }

  /// Draws before a collision is kept.
  static constexpr std::uint32_t kAttempts = 64;

 private:
  struct EntityValues {
    std::unordered_map<std::string, std::uint32_t> attempt;  // canonical original -> its attempt
    std::unordered_set<std::string> taken;                   // canonical surrogates
    // Each original as written -> its surrogate: a value repeated across rows
    // is drawn once (a draw is an HMAC and a generator call).
    std::unordered_map<std::string, std::string> drawn;
  };

  // The surrogate of a value not seen as written: the canonical value's
  // attempt when it was seen in another form, else the first free draw.
  std::string first_free_draw(Entity entity, std::string_view original, EntityValues& values);

  const PiiKey& key_;
  const WordLists& lists_;
  StatePermutation states_;
  std::map<Entity, EntityValues> values_;
  std::map<Entity, Counts> counts_;
};

}  // namespace nss::pii
