// Check "privacy.budget" (privacy.enabled; exit 2): the DP-SGD plan over the
// training data — n, q, sigma (calibrated or given), C, delta, the accountant
// and the epsilon training.max_steps spend, as privacy::plan_privacy decides
// them — the batches the sampling draws (expected, and the size exceeded with
// probability 1e-6) in micro-steps per rank, what a synthetic step at that
// bound took, and the examples (longest, truncated, padding). It fails when
// the target epsilon is out of reach, when a given sigma spends more than it
// or exceeds 100, and warns on few privacy units and on shuffled batches.
#pragma once

#include <optional>

#include "preflight/check.h"
#include "preflight/context.h"
#include "preflight/report.h"

namespace nss::preflight {

/// Fewer privacy units than this make the noise large against the signal: a warning.
constexpr std::int64_t kFewPrivacyUnits = 1000;

/// report.privacy of a private run (nullopt otherwise, or when data.format did
/// not pass): the plan over data.path's documents, read within
/// preflight.first_batch_timeout_s. A plan that cannot be made is recorded in
/// the summary's error, not thrown.
std::optional<PrivacySummary> plan_privacy_summary(const PreflightContext& context,
                                                   const PreflightReport& report);

/// "privacy.budget" from report.privacy; skipped with the reason when privacy
/// is off or the plan was not made.
Check check_privacy_budget(const PreflightContext& context, const PreflightReport& report);

}  // namespace nss::preflight
