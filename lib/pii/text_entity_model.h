// A model that finds entities in free text which no pattern can: a person's
// name or a place written in prose. The recognizers (pii/cell_scanner.h)
// see only what has a shape or is in Faker's word lists; a named-entity
// model loaded from a local directory (lib/ner) fills that gap behind this
// seam, so PII handling does not depend on how the model is run.
#pragma once

#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "pii/cell_scanner.h"

namespace nss::pii {

class TextEntityModel {
 public:
  virtual ~TextEntityModel() = default;

  /// The entity spans of each of `cells` (byte offsets into the cell, left
  /// to right, none overlapping), only of the entities the model was asked
  /// for. Many cells at once: a model runs faster on a batch.
  virtual std::vector<std::vector<Span>> find(const std::vector<std::string_view>& cells) = 0;

  /// What the report says about the model: where it came from, its labels
  /// and the entities they became, and what it did.
  virtual nlohmann::ordered_json describe() const = 0;
};

}  // namespace nss::pii
