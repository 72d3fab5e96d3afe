// PRV accountant of DP-SGD (Gopi, Lee, Wutschitz 2021, "Numerical composition
// of differential privacy"), as in Opacus's PRVAccountant and Microsoft's
// prv_accountant: the privacy-loss random variable of one Poisson-subsampled
// Gaussian step (subsampled_gaussian_prv.h) is truncated to [-L, L],
// discretised on a uniform grid with its mean kept, composed `steps` times by
// FFT, and epsilon(delta) is read off with the paper's error bounds.
#pragma once

#include <cstdint>

namespace nss::privacy {

struct PrvOptions {
  /// Bound on the epsilon error from truncation and discretisation.
  double eps_error = 0.01;
  /// Bound on the delta error; 0 means delta / 1000 (Opacus's default).
  double delta_error = 0.0;
  /// The largest grid (a power of two; about 40 bytes a point in memory,
  /// 0.7 GB at the default) before the accountant refuses: at 10,000 steps
  /// and delta 1e-5 it covers RDP epsilons up to about 250.
  std::int64_t max_grid_points = std::int64_t{1} << 24;
};

/// The true epsilon(delta) lies in [lower, upper]; `estimate` is the
/// discretised PRV's own epsilon(delta).
struct PrvEpsilon {
  double lower = 0.0;
  double estimate = 0.0;
  double upper = 0.0;
  std::int64_t grid_points = 0;  // 0 where no grid was needed
};

/// Epsilon after `steps` steps at rate q with noise multiplier sigma: 0 for
/// no steps, +inf at sigma 0. Throws nss::UsageError on invalid inputs or
/// options, or when the grid would exceed options.max_grid_points.
PrvEpsilon prv_epsilon(double sampling_rate, double noise_multiplier, std::int64_t steps,
                       double delta, const PrvOptions& options = {});

}  // namespace nss::privacy
