// The stateful components of a run (stateful_component.h), in registration
// order: every save asks each for its section, a resume compares the
// sections it must match and then hands each component what the step holds.
#pragma once

#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "checkpoint/load.h"
#include "checkpoint/resume_check.h"
#include "checkpoint/save.h"
#include "checkpoint/stateful_component.h"

namespace nss::checkpoint {

class ComponentRegistry {
 public:
  /// Registers `component` (borrowed: it outlives the registry); its name
  /// must be new.
  void add(StatefulComponent& component);

  /// Adds each component's section to request.state or request.secrets (a
  /// null section is left out; a public one never replaces a field there).
  void add_sections(SaveRequest& request) const;

  /// The sections a resume must match, as the step whose metadata.json
  /// "state" is `saved_state` holds them and as this run would save them.
  std::vector<SectionComparison> comparisons(const nlohmann::json& saved_state) const;

  /// Hands each component its section of `resumed`, or nothing on a fresh
  /// start (nullopt).
  void load(const std::optional<LoadResult>& resumed) const;

 private:
  std::vector<StatefulComponent*> components_;
};

}  // namespace nss::checkpoint
