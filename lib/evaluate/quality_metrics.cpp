#include "evaluate/quality_metrics.h"

#include <cmath>

#include "evaluate/correlation.h"
#include "evaluate/deep_structure.h"
#include "evaluate/distribution.h"
#include "evaluate/reference_random.h"
#include "evaluate/text_structure.h"

namespace nss::evaluate {
namespace {

// The mean distance of the training-tabular columns (a column the
// synthetic side cannot compare counts as 0, as in the reference).
Score column_distribution_score(const EvaluationTables& tables,
                                const std::vector<ColumnDistribution>& columns) {
  double sum = 0;
  std::size_t tabular = 0;
  for (std::size_t c = 0; c < columns.size(); ++c) {
    if (!is_tabular(tables.training_types[c])) continue;
    ++tabular;
    sum += columns[c].distance.value_or(0);
  }
  if (tabular == 0) return unavailable("No tabular columns detected.");
  const double average = sum / static_cast<double>(tabular);
  return finalize(average, tabular_curve(average));
}

// Python's `a or b`: a value of 0 falls through.
std::optional<double> or_else(std::optional<double> a, std::optional<double> b) {
  return a && *a != 0 ? a : b;
}

}  // namespace

Score synthetic_quality_score(const Score& deep_structure, const Score& distribution,
                              const Score& correlation, const Score& text_semantic,
                              const Score& text_structure, std::size_t tabular_columns,
                              std::size_t text_columns) {
  std::optional<double> tabular;
  double weighted = 0, weights = 0;
  for (const auto& [score, weight] : {std::pair<const Score*, double>{&deep_structure, 0.84},
                                      {&distribution, 0.86},
                                      {&correlation, 1.0}}) {
    if (!score->score) continue;
    weighted += weight * *score->score;
    weights += weight;
  }
  if (weights > 0) tabular = python_round(weighted / weights, 3);
  std::optional<double> text;
  if (text_semantic.score && text_structure.score)
    text = 0.7 * *text_semantic.score + 0.3 * *text_structure.score;
  else
    text = or_else(text_semantic.score, text_structure.score);
  std::optional<double> sqs;
  if (!tabular || !text) {
    sqs = or_else(tabular, text);
  } else {
    sqs = (static_cast<double>(tabular_columns) * *tabular +
           static_cast<double>(text_columns) * *text) /
          static_cast<double>(tabular_columns + text_columns);
  }
  if (!sqs) return unavailable("no quality component could be computed");
  return finalize(*sqs, *sqs);
}

void measure_quality(const EvaluationTables& tables, EvaluationResult& result) {
  result.columns.clear();
  std::size_t text_columns = 0;
  for (std::size_t c = 0; c < tables.training.columns.size(); ++c) {
    result.columns.push_back(compare_column(
        tables.training.columns[c].name, tables.training.columns[c], tables.synthetic.columns[c]));
    text_columns += tables.training_types[c] == FieldType::kText;
  }
  result.column_distribution = column_distribution_score(tables, result.columns);
  result.correlation = measure_correlation(tables);
  result.deep_structure = measure_deep_structure(tables);
  result.text_structure = measure_text_structure(tables);
  result.text_semantic =
      !tables.holdout
          ? unavailable(
                "Unable to calculate Text Semantic Similarity. No holdout test dataframe "
                "provided.")
      : text_columns == 0 ? unavailable()
                          : unavailable(
                                "needs a sentence-embedding model (NeMo Safe Synthesizer uses "
                                "distiluse-base-multilingual-cased-v2); nss_evaluate loads none");
  result.quality = synthetic_quality_score(
      result.deep_structure.score, result.column_distribution, result.correlation.score,
      result.text_semantic, result.text_structure.score,
      tables.training.columns.size() - text_columns, text_columns);
}

}  // namespace nss::evaluate
