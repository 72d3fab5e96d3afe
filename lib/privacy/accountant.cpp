#include "privacy/accountant.h"

#include <cmath>

#include "core/error.h"
#include "privacy/accounting_inputs.h"

namespace nss::privacy {
namespace {

std::string text(double value) {
  return number_text(value, 6);
}

// The lowest noise multiplier tried when bracketing down: epsilon grows
// without bound as sigma falls, so a target is met long before it.
constexpr double kMinNoiseMultiplier = 1e-3;

}  // namespace

const char* accountant_kind_name(AccountantKind kind) {
  return kind == AccountantKind::kRdp ? "rdp" : "prv";
}

AccountantKind parse_accountant_kind(const std::string& name) {
  if (name == "rdp") return AccountantKind::kRdp;
  if (name == "prv") return AccountantKind::kPrv;
  throw UsageError("privacy", "unknown accountant '" + name + "'",
                   "use 'rdp' (Rényi DP, as Opacus) or 'prv' (the tighter PRV accountant)");
}

EpsilonBounds epsilon_bounds(AccountantKind kind, double q, double sigma, std::int64_t steps,
                             double delta, const AccountingOptions& options) {
  if (kind == AccountantKind::kRdp) {
    const double eps = rdp_epsilon(q, sigma, steps, delta, options.rdp_orders).epsilon;
    return {eps, eps, eps};
  }
  const PrvEpsilon prv = prv_epsilon(q, sigma, steps, delta, options.prv);
  return {prv.lower, prv.estimate, prv.upper};
}

double epsilon(AccountantKind kind, double q, double sigma, std::int64_t steps, double delta,
               const AccountingOptions& options) {
  return epsilon_bounds(kind, q, sigma, steps, delta, options).upper;
}

double calibrate_noise_multiplier(AccountantKind kind, double q, std::int64_t steps, double delta,
                                  double target, const CalibrationOptions& options) {
  check_accounting_inputs(q, 1.0, steps, delta);
  check_target_epsilon(target);
  const double max_sigma = options.max_noise_multiplier;
  if (!(max_sigma > kMinNoiseMultiplier && std::isfinite(max_sigma)))
    throw UsageError("privacy", "max noise multiplier " + text(max_sigma) + " is not above 0.001",
                     "leave it at its default, 100");
  if (!(options.relative_tolerance > 0.0))
    throw UsageError("privacy", "calibration tolerance is not positive", "leave it at 1e-3");
  if (steps == 0) return 0.0;  // nothing is released
  auto meets = [&](double sigma) {
    return epsilon(kind, q, sigma, steps, delta, options.accounting) <= target;
  };
  const double at_max = epsilon(kind, q, max_sigma, steps, delta, options.accounting);
  if (!(at_max <= target))
    throw UsageError("privacy",
                     "target epsilon " + text(target) + " is out of reach: epsilon is " +
                         text(at_max) + " even at noise multiplier " + text(max_sigma) + " (q " +
                         text(q) + ", " + std::to_string(steps) + " steps, delta " + text(delta) +
                         ")",
                     "raise the target epsilon, lower the sampling rate (smaller batches or more "
                     "data), train fewer steps, or raise the maximum noise multiplier");
  // PRV starts from RDP's answer, which it nearly always meets (RDP's epsilon
  // is the looser bound) and whose noise is rarely 10 % above PRV's: a few
  // PRV evaluations (each up to a second) instead of one per halving from 1.
  double hi = 1.0, factor = 0.5;
  if (kind == AccountantKind::kPrv) {
    CalibrationOptions rdp = options;
    rdp.relative_tolerance = 1e-2;
    // A target that only PRV's tighter epsilon meets: start from the top.
    const bool rdp_meets =
        epsilon(AccountantKind::kRdp, q, max_sigma, steps, delta, options.accounting) <= target;
    hi = rdp_meets ? calibrate_noise_multiplier(AccountantKind::kRdp, q, steps, delta, target, rdp)
                   : max_sigma;
    factor = 0.9;
  }
  hi = std::min(hi, max_sigma);
  while (!meets(hi)) hi = std::min(hi / factor, max_sigma);
  double lo = hi * factor;
  while (lo > kMinNoiseMultiplier && meets(lo)) {
    hi = lo;
    lo *= factor;
  }
  // Invariant: hi meets the target, lo does not (or is the floor).
  while (hi / lo > 1.0 + options.relative_tolerance) {
    const double mid = std::sqrt(lo * hi);
    (meets(mid) ? hi : lo) = mid;
  }
  return hi;
}

}  // namespace nss::privacy
