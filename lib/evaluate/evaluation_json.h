// evaluation.json: every score under the names NeMo Safe Synthesizer gives
// it — the nine summary fields of its evaluation_metrics.json and the
// component dictionary of its report (raw_score, grade, score, notes) — so
// results compare field by field, then what nss_evaluate adds (per-column
// distances, dataset statistics, the inputs and the privacy guarantee).
#pragma once

#include <nlohmann/json.hpp>

#include "evaluate/evaluation_result.h"

namespace nss::evaluate {

/// The summary (NeMo Safe Synthesizer's SafeSynthesizerSummary score
/// fields, null when unavailable) and the component dictionary, every
/// component present (an unavailable one with its notes).
nlohmann::ordered_json evaluation_json(const EvaluationResult& result);

/// One score as {"raw_score", "grade", "score", "notes"}.
nlohmann::ordered_json score_json(const Score& score);

}  // namespace nss::evaluate
