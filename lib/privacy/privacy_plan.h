// What a private run's configuration means once the data is known: the
// privacy units n (documents of the token file, one per group when prepared
// with --group-by), the sampling rate q = B / n, delta (auto: 1 / n^1.2),
// and sigma (given, or calibrated so that max_steps spend target_epsilon).
// One place decides these, for the trainer, the preflight and the exports.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "privacy/accountant.h"

namespace nss::privacy {

/// The checkpoint section that holds a private run's PrivacyPlan::settings()
/// (metadata.json state.privacy), which exports turn into privacy.json.
inline constexpr const char* kPlanSection = "privacy";

struct PrivacyPlan {
  std::int64_t units = 0;       // n
  double sampling_rate = 0;     // q = global_batch_size / n
  double expected_batch = 0;    // q·n: the update's denominator
  double noise_multiplier = 0;  // sigma
  bool calibrated = false;      // sigma from target_epsilon (else given)
  double max_grad_norm = 0;     // C
  double delta = 0;
  AccountantKind accountant = AccountantKind::kPrv;
  bool poisson = true;  // privacy.sampling: poisson
  std::int64_t planned_steps = 0;

  /// Epsilon spent after `steps` steps (skipped ones included).
  double epsilon_after(std::int64_t steps) const;
  /// What a resume must agree on and exports report (no secret):
  /// {accountant, sampling, units, q, noise_multiplier, max_grad_norm, delta}.
  nlohmann::json settings() const;
};

/// The clipping norm C of `config`'s plan, for a step run before the data
/// is known (the preflight's synthetic step).
double clipping_norm(const config::Config& config);

/// The plan of `config` over `units` privacy units. DataError (exit 4) when
/// n is 0 or q would exceed 1 (fewer units than global_batch_size);
/// UsageError (exit 2) when the target epsilon cannot be reached with
/// sigma <= 100 in max_steps.
PrivacyPlan plan_privacy(const config::Config& config, std::int64_t units);

}  // namespace nss::privacy
