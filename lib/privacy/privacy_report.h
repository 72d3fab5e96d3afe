// privacy.json: the guarantee a private run's weights carry, written beside
// every export (docs/privacy.md): epsilon after the steps taken, delta, the
// mechanism's parameters, and what the guarantee does not cover. Built from a
// checkpoint's state.privacy (PrivacyPlan::settings()) alone: no secret.
#pragma once

#include <cstdint>

#include <nlohmann/json.hpp>

namespace nss::privacy {

/// The report for `settings` (state.privacy) after `steps` steps; throws
/// nss::CheckpointError naming the field when settings lack one.
nlohmann::json privacy_report(const nlohmann::json& settings, std::int64_t steps);

}  // namespace nss::privacy
