// Consistent replacement across a table: a value gets the same surrogate in
// every row and column of its entity (a pure function of the key, the entity
// and the value's canonical form, so also across tables prepared with the
// same key), no surrogate equals its original, and within a table no two
// values share one. A draw that equals its original or is taken is drawn
// again from the next keyed attempt.
#pragma once

#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <string_view>

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
    std::map<std::string, std::uint32_t> attempt;  // canonical original -> its attempt
    std::set<std::string> taken;                   // canonical surrogates
  };

  const PiiKey& key_;
  const WordLists& lists_;
  StatePermutation states_;
  std::map<Entity, EntityValues> values_;
  std::map<Entity, Counts> counts_;
};

}  // namespace nss::pii
