// Membership Inference Protection as NeMo Safe Synthesizer scores it
// (tabular path): how well an attacker who thresholds each row's distance
// to its nearest synthetic row tells training rows from holdout rows, over
// 10 runs of 36 attacks (4 thresholds x 9 proportions).
#pragma once

#include <vector>

#include "evaluate/evaluation_result.h"
#include "evaluate/evaluation_tables.h"
#include "evaluate/reference_random.h"

namespace nss::evaluate {

/// The attack score of one run (sum of the 36 attacks' points / 36,
/// rounded to 2 digits) from the attack rows' nearest-synthetic distances
/// and labels (1: a training row), both already in the run's shuffled
/// order; adds each attack's grade and the true/false positives per
/// threshold to `result`.
double membership_attack_run(std::vector<double> distances, const std::vector<int>& labels,
                             MembershipResult& result);

/// Python's statistics.mean: the mean of the doubles correctly rounded.
double exact_mean(const std::vector<double>& values);

/// Unavailable without a holdout (no notes) or with a text column (notes:
/// a sentence-embedding model is needed). `global_rng` stands for numpy's
/// global RandomState as the attribute inference left it: the quantile
/// transform draws its 10000-row subsample from it when the training,
/// synthetic and holdout rows together exceed 10000. `threads`: for the
/// distance search (0: the hardware's); the result does not depend on it.
MembershipResult measure_membership_inference(const EvaluationTables& tables,
                                              LegacyRandom& global_rng, unsigned threads = 0);

}  // namespace nss::evaluate
