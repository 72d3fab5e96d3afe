// The privacy half of nss_evaluate: what NeMo Safe Synthesizer's Data
// Privacy Score and the components beside it measure, in NSS's order
// (attribute inference, then membership inference, which reads the random
// state the first leaves), on the tabular path. A table with a column typed
// text gets both attacks (and so the DPS) unavailable, with a note: NSS
// embeds text with a sentence-embedding model nss_evaluate does not load.
#pragma once

#include "evaluate/evaluation_result.h"
#include "evaluate/evaluation_tables.h"

namespace nss::evaluate {

/// Fills result.statistics (with the memorized rows), result.attribute,
/// result.membership, result.privacy and result.pii_replay (unavailable:
/// it needs the PII detection of nss_prepare_data). `threads`: for the
/// membership distances (0: the hardware's); results do not depend on it.
void measure_privacy(const EvaluationTables& tables, EvaluationResult& result,
                     unsigned threads = 0);

}  // namespace nss::evaluate
