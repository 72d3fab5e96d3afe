// PII handling of a table being prepared: each column classified once on
// the training rows (an entity column, a column kept as it is, or a column
// whose cells are scanned for entities inside free text), then one mode
// applied to the training rows and to the holdout alike under one key, so
// that a value has the same surrogate or keyed hash wherever it appears.
// Missing cells are never changed.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "pii/column_classifier.h"
#include "pii/pii_key.h"
#include "pii/surrogate_map.h"
#include "pii/text_entity_model.h"
#include "pii/word_lists.h"

namespace nss::pii {

enum class PiiMode { kDetect, kReplace, kHash, kRedact };

/// "detect", "replace", "hash" or "redact"; UsageError naming the choices.
PiiMode parse_pii_mode(std::string_view name);
std::string_view pii_mode_name(PiiMode mode);

struct PiiOptions {
  PiiMode mode = PiiMode::kReplace;
  ClassifierOptions classifier;  // the entities looked for, --pii-column, --pii-keep
  // Finds entities in the free text of columns without one, beside the
  // recognizers; none: the recognizers alone.
  TextEntityModel* text_model = nullptr;
};

/// What was found in one column of the training rows (NSS's column
/// statistics, with distinct counts instead of the values themselves).
struct ColumnStatistics {
  std::string name;
  std::optional<Entity> assigned_entity;
  std::map<Entity, std::int64_t> counts;  // cells of an entity column; spans of a scanned one
  std::map<Entity, std::int64_t> unique_counts;  // distinct cells; distinct canonical spans
  std::set<std::string> transform_functions;     // NSS's names: fake, fake_entities, hash, ...
  ColumnEvidence evidence;
  std::int64_t cells_scanned = 0, cells_with_detection = 0;
};

struct PiiResult {
  std::vector<ColumnStatistics> columns;              // in header order
  std::map<Entity, SurrogateMap::Counts> surrogates;  // replace only
};

using TableRows = std::vector<std::vector<std::string>>;

/// Classifies the columns of `training` (rows of `header`) and applies
/// `options.mode` to it and to each of `others` (rows of the same header).
/// The statistics describe the training rows as they were. `key` is needed
/// by replace and hash (InternalError without it).
PiiResult transform_tables(const std::vector<std::string>& header, TableRows& training,
                           const std::vector<TableRows*>& others, const PiiOptions& options,
                           const PiiKey* key, const WordLists& lists);

}  // namespace nss::pii
