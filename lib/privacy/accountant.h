// The privacy accountant of a DP-SGD run: epsilon(delta) after some steps of
// the Poisson-subsampled Gaussian mechanism, by RDP (rdp_accountant.h) or PRV
// (prv_accountant.h), and the noise multiplier that meets a target epsilon.
// Epsilon is a pure function of (kind, q, sigma, steps, delta): a checkpoint
// that stores (kind, q, sigma, steps) resumes epsilon exactly.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "privacy/prv_accountant.h"
#include "privacy/rdp_accountant.h"

namespace nss::privacy {

enum class AccountantKind { kRdp, kPrv };

/// "rdp" or "prv", as configuration files and checkpoints spell them.
const char* accountant_kind_name(AccountantKind kind);
/// The kind named "rdp" or "prv"; nss::UsageError otherwise.
AccountantKind parse_accountant_kind(const std::string& name);

struct AccountingOptions {
  std::vector<double> rdp_orders = default_rdp_orders();
  PrvOptions prv;
};

/// Epsilon with its error bounds: the true epsilon lies in [lower, upper];
/// RDP's is a bound with no discretisation error (all three equal).
struct EpsilonBounds {
  double lower = 0.0;
  double estimate = 0.0;
  double upper = 0.0;
};

/// Epsilon(delta) after `steps` steps at sampling rate q and noise multiplier
/// sigma, with its bounds. Throws nss::UsageError on invalid inputs.
EpsilonBounds epsilon_bounds(AccountantKind kind, double sampling_rate, double noise_multiplier,
                             std::int64_t steps, double delta,
                             const AccountingOptions& options = {});

/// The guarantee to report: epsilon_bounds(...).upper (0 for no steps,
/// +inf for sigma 0).
double epsilon(AccountantKind kind, double sampling_rate, double noise_multiplier,
               std::int64_t steps, double delta, const AccountingOptions& options = {});

struct CalibrationOptions {
  double max_noise_multiplier = 100.0;
  /// Bisection stops once the bracket's ratio is within 1 + this.
  double relative_tolerance = 1e-3;
  AccountingOptions accounting;
};

/// The smallest noise multiplier (within the tolerance, from above) whose
/// epsilon after `steps` steps is at most the target, by bisection; 0 for no
/// steps. Throws nss::UsageError on invalid inputs, or when even
/// max_noise_multiplier exceeds the target.
double calibrate_noise_multiplier(AccountantKind kind, double sampling_rate, std::int64_t steps,
                                  double delta, double target_epsilon,
                                  const CalibrationOptions& options = {});

}  // namespace nss::privacy
