// A tagger's labels read as transformers' token-classification pipeline
// reads them (B-PER begins a person, I-PER continues one, a label without
// a prefix continues its group), and the PII entity each group stands for.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "pii/entity.h"

namespace nss::ner {

struct LabelTag {
  bool begins = false;  // B-
  std::string group;    // "PER"; "O" outside any entity
};

/// The tag of `label`: "B-PER" -> {true, "PER"}, "I-PER" and "PER" -> {false, "PER"}.
LabelTag label_tag(std::string_view label);

/// The entity a group is: person names (PER, PERSON) are name, places (LOC,
/// LOCATION, GPE) city; a group spelled as an entity (any case: EMAIL,
/// street_address) is that entity; anything else (ORG, MISC, O) is none.
std::optional<pii::Entity> entity_of_group(std::string_view group);

}  // namespace nss::ner
