// A column's kind as NeMo Safe Synthesizer's evaluation infers it
// (describe_field): what decides how each metric treats the column.
#pragma once

#include <string>

#include "evaluate/table.h"

namespace nss::evaluate {

enum class FieldType { kEmpty, kNumeric, kCategorical, kText, kOther, kBinary };

/// First match wins: no value -> empty; two distinct values -> binary;
/// float -> numeric; int or bool -> categorical with at most 10 distinct
/// non-negative values, else numeric; text cells -> categorical when at
/// least 90% of them repeat (70% in 50 cells or fewer), text when they hold
/// more than two spaces each on average, else other.
FieldType describe_field(const Column& column);

/// "numeric", "categorical", ... as evaluation.json names them.
const char* field_type_name(FieldType type);

/// Binary, categorical or numeric: a column the tabular metrics measure.
inline bool is_tabular(FieldType type) {
  return type == FieldType::kBinary || type == FieldType::kCategorical ||
         type == FieldType::kNumeric;
}

/// Binary or categorical.
inline bool is_nominal(FieldType type) {
  return type == FieldType::kBinary || type == FieldType::kCategorical;
}

}  // namespace nss::evaluate
