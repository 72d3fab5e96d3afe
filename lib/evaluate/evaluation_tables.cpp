#include "evaluate/evaluation_tables.h"

#include <algorithm>
#include <numeric>
#include <set>

#include "core/error.h"
#include "evaluate/reference_random.h"

namespace nss::evaluate {
namespace {

std::string listed(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& name : names) out += (out.empty() ? "" : ", ") + name;
  return out;
}

// `table` with the columns `names` in that order; DataError unless its
// columns are exactly those.
Table aligned(const Table& table, const std::vector<std::string>& names, const Table& training) {
  std::vector<std::string> missing, extra;
  std::set<std::string> wanted(names.begin(), names.end());
  for (const auto& name : names)
    if (table.index_of(name) < 0) missing.push_back(name);
  for (const auto& column : table.columns)
    if (!wanted.count(column.name)) extra.push_back(column.name);
  if (!missing.empty() || !extra.empty())
    throw DataError("evaluate",
                    table.path + ": its columns differ from the training table's (" +
                        training.path + ")" +
                        (missing.empty() ? "" : "; missing: " + listed(missing)) +
                        (extra.empty() ? "" : "; not in training: " + listed(extra)),
                    "evaluate tables with the training table's columns (any order)");
  Table out;
  out.path = table.path;
  out.rows = table.rows;
  out.lines = table.lines;
  for (const auto& name : names) out.columns.push_back(table.columns[table.index_of(name)]);
  return out;
}

// A number column of the training table must hold numbers elsewhere too:
// the first cell that is not one is named (pandas would read the whole
// column as text and score it as such).
void check_number_columns(const Table& table, const Table& training) {
  for (std::size_t c = 0; c < table.columns.size(); ++c) {
    const Column& column = table.columns[c];
    const Dtype expected = training.columns[c].dtype;
    if (column.numeric() || (expected != Dtype::kInt64 && expected != Dtype::kFloat64)) continue;
    for (std::size_t r = 0; r < column.rows(); ++r) {
      if (column.is_missing(r) || reads_as_number(column.texts[r])) continue;
      const std::string line =
          table.lines.empty() ? "row " + std::to_string(r + 1) : std::to_string(table.lines[r]);
      throw DataError("evaluate",
                      table.path + ":" + line + ": column " + column.name + " holds '" +
                          column.texts[r].substr(0, 40) +
                          "', not a number as in the training table",
                      "a synthetic or holdout table must hold numbers where training does: "
                      "check how it was made");
    }
  }
}

Table sampled(const Table& table, std::size_t rows) {
  if (rows >= table.rows) return table;
  return take_rows(table, sample_rows(table.rows, rows, kRowSampleSeed));
}

}  // namespace

EvaluationTables make_evaluation_tables(const Table& training, const Table& synthetic,
                                        const std::optional<Table>& holdout, std::size_t max_rows) {
  std::vector<std::string> names;
  for (const auto& column : training.columns) names.push_back(column.name);
  EvaluationTables out;
  out.columns_read = names.size();
  const Table synthetic_aligned = aligned(synthetic, names, training);
  check_number_columns(synthetic_aligned, training);
  std::optional<Table> holdout_aligned;
  if (holdout) {
    holdout_aligned = aligned(*holdout, names, training);
    check_number_columns(*holdout_aligned, training);
  }
  if (names.size() > kMaxEvaluatedColumns) names.resize(kMaxEvaluatedColumns);
  out.training_rows_read = training.rows;
  out.synthetic_rows_read = synthetic.rows;
  const std::size_t rows = std::min({max_rows, training.rows, synthetic.rows});
  Table training_kept = training;
  training_kept.columns.resize(names.size());
  out.training = sampled(training_kept, rows);
  Table synthetic_kept = synthetic_aligned;
  synthetic_kept.columns.resize(names.size());
  out.synthetic = sampled(synthetic_kept, rows);
  if (holdout_aligned) {
    out.holdout_rows_read = holdout_aligned->rows;
    holdout_aligned->columns.resize(names.size());
    out.holdout = std::move(holdout_aligned);
  }
  for (std::size_t c = 0; c < names.size(); ++c) {
    out.training_types.push_back(describe_field(out.training.columns[c]));
    out.synthetic_types.push_back(describe_field(out.synthetic.columns[c]));
  }
  return out;
}

}  // namespace nss::evaluate
