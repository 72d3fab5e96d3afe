#include "pii/surrogate_map.h"

#include "pii/canonical.h"

namespace nss::pii {

SurrogateMap::SurrogateMap(const PiiKey& key, const WordLists& lists)
    : key_(key), lists_(lists), states_(key, lists) {}

std::string SurrogateMap::surrogate(Entity entity, std::string_view original) {
  EntityValues& values = values_[entity];
  const std::string written(original);
  if (const auto seen = values.drawn.find(written); seen != values.drawn.end()) return seen->second;
  std::string drawn = first_free_draw(entity, original, values);
  values.drawn.emplace(written, drawn);
  return drawn;
}

std::string SurrogateMap::first_free_draw(Entity entity, std::string_view original,
                                          EntityValues& values) {
  const std::string canonical = canonical_value(entity, original);
  const std::string_view name = entity_name(entity);
  const SurrogateSources sources{lists_, states_};
  const auto known = values.attempt.find(canonical);
  if (known != values.attempt.end()) {
    KeyedStream stream(key_, name, canonical, known->second);
    return draw_surrogate(entity, original, stream, sources);
  }
  Counts& counts = counts_[entity];
  ++counts.distinct;
  std::string drawn;
  for (std::uint32_t attempt = 0; attempt < kAttempts; ++attempt) {
    KeyedStream stream(key_, name, canonical, attempt);
    drawn = draw_surrogate(entity, original, stream, sources);
    const std::string drawn_canonical = canonical_value(entity, drawn);
    if (drawn_canonical != canonical && values.taken.insert(drawn_canonical).second) {
      values.attempt[canonical] = attempt;
      counts.collisions_resolved += attempt > 0;
      return drawn;
    }
  }
  values.attempt[canonical] = kAttempts - 1;
  ++counts.collisions_kept;
  return drawn;
}

}  // namespace nss::pii
