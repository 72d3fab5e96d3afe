// Rényi-DP accountant of DP-SGD (Mironov, Talwar, Zhang 2019, "Rényi
// differential privacy of the sampled Gaussian mechanism"), with the
// definitions of Opacus's opacus/accountants/analysis/rdp.py: the RDP of the
// Poisson-subsampled Gaussian at integer and fractional orders, Opacus's
// default orders, and the RDP -> (epsilon, delta) conversion of Balle et al.
// 2020 (Theorem 21 of arXiv:1905.09982) minimised over the orders.
#pragma once

#include <cstdint>
#include <vector>

namespace nss::privacy {

/// Opacus's DEFAULT_ALPHAS: 1.1, 1.2, ..., 10.9, then 12, 13, ..., 63.
const std::vector<double>& default_rdp_orders();

/// RDP at order alpha in (1, 10000] of one step with sampling rate q in (0, 1] and
/// noise multiplier sigma (infinite at sigma = 0).
double subsampled_gaussian_rdp(double sampling_rate, double noise_multiplier, double order);

/// Epsilon after `steps` steps and the order that gave it (NaN where no
/// order matters: no steps, or no noise).
struct RdpEpsilon {
  double epsilon = 0.0;
  double order = 0.0;
};

/// min over `orders` of steps * RDP(alpha) + log((alpha - 1) / alpha)
/// - (log delta + log alpha) / (alpha - 1); 0 for no steps, +inf at sigma 0.
/// Throws nss::UsageError on invalid inputs (accounting_inputs.h).
RdpEpsilon rdp_epsilon(double sampling_rate, double noise_multiplier, std::int64_t steps,
                       double delta, const std::vector<double>& orders = default_rdp_orders());

}  // namespace nss::privacy
