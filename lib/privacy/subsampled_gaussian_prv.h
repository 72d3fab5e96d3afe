// The privacy-loss random variable (PRV) of one DP-SGD step, the
// Poisson-subsampled Gaussian mechanism (Gopi, Lee, Wutschitz 2021,
// appendix B): with P = (1 - q) N(0, sigma^2) + q N(1, sigma^2) and
// Q = N(0, sigma^2), Y = log(P(X) / Q(X)) for X ~ P. Y > log(1 - q); the
// observation giving loss t is x(t) = sigma^2 log((e^t + q - 1) / q) + 1/2.
#pragma once

namespace nss::privacy {

class SubsampledGaussianPrv {
 public:
  /// q in (0, 1], sigma > 0.
  SubsampledGaussianPrv(double sampling_rate, double noise_multiplier);

  /// P(Y <= t).
  double cdf(double t) const;
  /// P(Y > t), accurate in the upper tail where 1 - cdf(t) would cancel.
  double sf(double t) const;
  /// E[Y; lo < Y <= hi], the mean over (lo, hi] times its probability, by
  /// Gauss-Legendre quadrature over the observation x.
  double partial_mean(double lo, double hi) const;

 private:
  double observation(double t) const;  // x(t); -inf at or below the support
  double loss(double x) const;         // t(x)
  double density(double x) const;      // P's density at x

  double q_;
  double sigma_;
};

}  // namespace nss::privacy
