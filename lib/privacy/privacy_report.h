// privacy.json: the guarantee a private run's weights carry, written beside
// every export (docs/privacy.md): epsilon after the steps taken, delta, the
// mechanism's parameters, and what the guarantee does not cover. Built from a
// checkpoint's state.privacy (PrivacyPlan::settings()) alone: no secret.
#pragma once

#include <cstdint>

#include <nlohmann/json.hpp>

namespace nss::privacy {

/// The report for `settings` (state.privacy) after `steps` steps, the
/// training data's record `dataset` (state.dataset, may be null) adding what
/// its preparation decided from the data; throws nss::CheckpointError naming
/// the field when settings lack one.
nlohmann::json privacy_report(const nlohmann::json& settings, std::int64_t steps,
                              const nlohmann::json& dataset);

}  // namespace nss::privacy
