// The entity of a table column, decided without a model: from the header's
// hint and the share of the column's cells that match the entity's value
// rule (NSS asks an LLM; these rules are tuned so that a column an LLM would
// call X is called X here). The evidence goes into the report.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "pii/entity.h"
#include "pii/value_rules.h"

namespace nss::pii {

struct ColumnEvidence {
  /// "values" (the share alone), "header+values" (a header hint was
  /// needed), "option" (--pii-column), "kept" (--pii-keep) or "scan" (no
  /// entity: the cells are scanned one by one).
  std::string source;
  std::optional<Entity> header_hint;  // the hint of the chosen entity, else the first
  double share = 0, shape_share = 0;
  std::size_t cells_checked = 0;
};

struct ColumnAssignment {
  std::optional<Entity> entity;
  ColumnEvidence evidence;
};

struct ClassifierOptions {
  std::vector<Entity> entities = default_entities();    // the only candidates
  std::map<std::string, std::optional<Entity>> forced;  // header -> entity or none
  std::set<std::string> kept;                           // headers never classified
};

/// Cells read at most; a longer column is read at evenly spaced indices.
inline constexpr std::size_t kClassifierSample = 10000;

/// The entity of the column `header` with `cells` (missing cells, as
/// core/missing_cell.h says, left out): a forced or kept column as the
/// options say; else the candidate whose share of matching cells reaches its
/// threshold (lower with a header hint naming it), ties to the first.
ColumnAssignment classify_column(const std::string& header,
                                 const std::vector<std::string_view>& cells,
                                 const ClassifierOptions& options, const ValueRules& rules);

}  // namespace nss::pii
