// The three tables every metric reads, made as NeMo Safe Synthesizer's
// evaluation makes them: the training table's columns (the synthetic table
// and the holdout must have exactly those), training and synthetic rows
// sampled down to min(5000, both counts) with pandas' sample and seed
// 424242, the holdout untouched; each column typed on each side.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "evaluate/field_type.h"
#include "evaluate/table.h"

namespace nss::evaluate {

inline constexpr std::size_t kMaxEvaluatedRows = 5000;
inline constexpr std::size_t kMaxEvaluatedColumns = 250;
inline constexpr std::uint32_t kRowSampleSeed = 424242;

struct EvaluationTables {
  Table training, synthetic;                               // sampled, columns in training order
  std::optional<Table> holdout;                            // columns in training order, every row
  std::vector<FieldType> training_types, synthetic_types;  // per column
  std::size_t training_rows_read = 0, synthetic_rows_read = 0, holdout_rows_read = 0;
  std::size_t columns_read = 0;  // before the 250-column cap
};

/// The evaluation's tables. DataError when the synthetic table or the
/// holdout lacks a training column or has one training lacks (naming the
/// file and the columns), or holds a cell that is not a number in a column
/// the training table holds numbers in (naming file, line, column and
/// value). Beyond kMaxEvaluatedColumns columns, the first
/// ones in training order are evaluated.
EvaluationTables make_evaluation_tables(const Table& training, const Table& synthetic,
                                        const std::optional<Table>& holdout,
                                        std::size_t max_rows = kMaxEvaluatedRows);

}  // namespace nss::evaluate
