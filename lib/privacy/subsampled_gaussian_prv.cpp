#include "privacy/subsampled_gaussian_prv.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>

namespace nss::privacy {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr int kNodes = 16;

struct GaussLegendre {
  std::array<double, kNodes> x{}, w{};
};

// Nodes and weights on [-1, 1]: Newton's method on the Legendre polynomial
// from the usual cosine first guesses.
GaussLegendre make_gauss_legendre() {
  GaussLegendre rule;
  for (int i = 0; i < kNodes / 2; ++i) {
    double z = std::cos(M_PI * (i + 0.75) / (kNodes + 0.5)), slope = 0.0;
    for (int iteration = 0; iteration < 100; ++iteration) {
      double p1 = 1.0, p2 = 0.0;
      for (int j = 1; j <= kNodes; ++j) {
        const double p3 = p2;
        p2 = p1;
        p1 = ((2.0 * j - 1.0) * z * p2 - (j - 1.0) * p3) / j;
      }
      slope = kNodes * (z * p1 - p2) / (z * z - 1.0);
      const double step = p1 / slope;
      z -= step;
      if (std::fabs(step) < 1e-16) break;
    }
    rule.x[i] = -z;
    rule.x[kNodes - 1 - i] = z;
    rule.w[i] = rule.w[kNodes - 1 - i] = 2.0 / ((1.0 - z * z) * slope * slope);
  }
  return rule;
}

const GaussLegendre kRule = make_gauss_legendre();

double normal_density(double u) {
  return std::exp(-0.5 * u * u) / std::sqrt(2.0 * M_PI);
}

}  // namespace

SubsampledGaussianPrv::SubsampledGaussianPrv(double sampling_rate, double noise_multiplier)
    : q_(sampling_rate), sigma_(noise_multiplier) {}

double SubsampledGaussianPrv::observation(double t) const {
  if (q_ < 1.0 && t <= std::log1p(-q_)) return -kInf;
  // z = log((e^t + q - 1) / q), in the form that neither overflows nor cancels.
  const double z = t <= 30.0 ? std::log1p(std::expm1(t) / q_)
                             : t - std::log(q_) + std::log1p((q_ - 1.0) * std::exp(-t));
  return sigma_ * sigma_ * z + 0.5;
}

double SubsampledGaussianPrv::loss(double x) const {
  const double u = (2.0 * x - 1.0) / (2.0 * sigma_ * sigma_);
  if (q_ == 1.0) return u;
  return u <= 30.0 ? std::log1p(q_ * std::expm1(u)) : u + std::log(q_ + (1.0 - q_) * std::exp(-u));
}

double SubsampledGaussianPrv::density(double x) const {
  return ((1.0 - q_) * normal_density(x / sigma_) + q_ * normal_density((x - 1.0) / sigma_)) /
         sigma_;
}

double SubsampledGaussianPrv::cdf(double t) const {
  const double x = observation(t);
  if (x == -kInf) return 0.0;
  const double s = std::sqrt(2.0) * sigma_;
  return 0.5 * ((1.0 - q_) * std::erfc(-x / s) + q_ * std::erfc((1.0 - x) / s));
}

double SubsampledGaussianPrv::sf(double t) const {
  const double x = observation(t);
  if (x == -kInf) return 1.0;
  const double s = std::sqrt(2.0) * sigma_;
  return 0.5 * ((1.0 - q_) * std::erfc(x / s) + q_ * std::erfc((x - 1.0) / s));
}

double SubsampledGaussianPrv::partial_mean(double lo, double hi) const {
  // Beyond 38 sigma from both components the density is below 1e-300.
  const double a = std::max(observation(lo), -38.0 * sigma_);
  const double b = std::min(observation(hi), 1.0 + 38.0 * sigma_);
  if (!(a < b)) return 0.0;
  // Panels of half the narrower scale of the integrand: the density's sigma,
  // and sigma^2, over which the loss turns from flat to linear in x.
  const double width = 0.5 * std::min(sigma_, sigma_ * sigma_);
  const auto panels = static_cast<std::int64_t>(std::ceil((b - a) / width));
  const double h = (b - a) / static_cast<double>(panels);
  double sum = 0.0;
  for (std::int64_t p = 0; p < panels; ++p) {
    const double centre = a + (p + 0.5) * h;
    double panel = 0.0;
    for (int i = 0; i < kNodes; ++i) {
      const double x = centre + 0.5 * h * kRule.x[i];
      panel += kRule.w[i] * loss(x) * density(x);
    }
    sum += 0.5 * h * panel;
  }
  return sum;
}

}  // namespace nss::privacy
