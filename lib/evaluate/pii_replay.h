// PII replay, as NeMo Safe Synthesizer's evaluation measures it: for each
// training column that PII detection assigned an entity, how many of its
// distinct training values (the original values, before any replacement)
// reappear in the synthetic column. Computed on the whole tables (NSS does
// not sample here) and never scored: it is reported beside the DPS, not in it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "evaluate/evaluation_result.h"
#include "evaluate/table.h"

namespace nss::evaluate {

/// A column PII detection assigned an entity, with the non-missing cells it
/// counted there (to tell a report made from another table), -1 unknown.
struct PiiColumn {
  std::string column;
  std::string entity;
  std::int64_t reported_cells = -1;
};

/// NSS's percentage: ceil(unique_synthetic / unique_training * 100 * 10) / 10
/// in doubles, evaluated in Python's order (11/20 gives 55.1).
double replay_percentage(std::int64_t unique_synthetic, std::int64_t unique_training);

/// The replay of `columns` (in their order) from `training` to `synthetic`.
/// Values match as pandas' isin matches them: numbers by value across int,
/// float and bool columns, text by its bytes, never a number with text.
/// DataError when a column is missing from a table, or its non-missing
/// training cells differ from what the report counted (another table).
PiiReplayResult measure_pii_replay(const Table& training, const Table& synthetic,
                                   const std::vector<PiiColumn>& columns);

}  // namespace nss::evaluate
