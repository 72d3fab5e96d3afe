#include "checkpoint/component_registry.h"

#include "core/error.h"

namespace nss::checkpoint {

void ComponentRegistry::add(StatefulComponent& component) {
  for (const StatefulComponent* other : components_)
    NSS_ASSERT(other->name() != component.name(), "checkpoint",
               "two stateful components are named " + component.name());
  components_.push_back(&component);
}

void ComponentRegistry::add_sections(SaveRequest& request) const {
  for (const StatefulComponent* component : components_) {
    nlohmann::json section = component->state();
    if (section.is_null()) continue;
    nlohmann::json& sections = component->secret() ? request.secrets : request.state;
    NSS_ASSERT(!sections.contains(component->name()), "checkpoint",
               "the section " + component->name() + " would replace a field of metadata.json");
    sections[component->name()] = std::move(section);
  }
}

std::vector<SectionComparison> ComponentRegistry::comparisons(
    const nlohmann::json& saved_state) const {
  std::vector<SectionComparison> list;
  for (const StatefulComponent* component : components_) {
    const char* why = component->resume_mismatch();
    if (!why) continue;
    // A refusal prints both values.
    NSS_ASSERT(!component->secret(), "checkpoint",
               "the secret section " + component->name() + " is compared at resume");
    list.push_back(
        {component->name(), find_section(saved_state, component->name()), component->state(), why});
  }
  return list;
}

void ComponentRegistry::load(const std::optional<LoadResult>& resumed) const {
  for (StatefulComponent* component : components_) {
    if (!resumed) {
      component->load(std::nullopt);
      continue;
    }
    const nlohmann::json& sections = component->secret() ? resumed->secrets : resumed->state;
    component->load(find_section(sections, component->name()));
  }
}

}  // namespace nss::checkpoint
