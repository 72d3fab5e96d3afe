// The Data Privacy Score: NeMo Safe Synthesizer's mean of the attribute and
// membership inference protection scores.
#pragma once

#include "evaluate/score.h"

namespace nss::evaluate {

/// The mean of the available scores that are not exactly 0.0 (NSS keeps a
/// score only when it is truthy), finalized (rounded to 0.1, graded);
/// unavailable when neither is available or both are 0.0.
Score data_privacy_score(const Score& attribute, const Score& membership);

}  // namespace nss::evaluate
