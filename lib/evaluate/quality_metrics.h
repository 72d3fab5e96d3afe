// The Synthetic Quality Score and its components (NeMo Safe Synthesizer's
// sqs_score and the components it weighs): column distribution stability,
// column correlation stability, deep structure stability, text structure
// similarity, and text semantic similarity (which needs a sentence-embedding
// model nss_evaluate does not load: reported unavailable with the reason).
#pragma once

#include <optional>

#include "evaluate/evaluation_result.h"
#include "evaluate/evaluation_tables.h"

namespace nss::evaluate {

/// Fills result.columns, column_distribution, correlation, deep_structure,
/// text_structure, text_semantic and quality.
void measure_quality(const EvaluationTables& tables, EvaluationResult& result);

/// The SQS from its components (each rounded to 0.1 or unavailable) and
/// the column counts: weighted 0.84 / 0.86 / 1.0 over the tabular ones,
/// 0.7 / 0.3 semantic / structure, the two mixed by column counts.
Score synthetic_quality_score(const Score& deep_structure, const Score& distribution,
                              const Score& correlation, const Score& text_semantic,
                              const Score& text_structure, std::size_t tabular_columns,
                              std::size_t text_columns);

}  // namespace nss::evaluate
