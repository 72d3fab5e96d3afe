#include "privacy/rdp_accountant.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "core/error.h"
#include "privacy/accounting_inputs.h"

namespace nss::privacy {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// Larger orders only tighten epsilon for deltas far below any in use, and the
// integer-order sum has alpha + 1 terms.
constexpr double kMaxOrder = 10000.0;

// log(e^a + e^b) without overflow.
double log_add(double a, double b) {
  if (a < b) std::swap(a, b);
  if (b == -kInf) return a;
  return a + std::log1p(std::exp(b - a));
}

// log(e^a - e^b) for a >= b.
double log_sub(double a, double b) {
  NSS_ASSERT(a >= b, "privacy", "negative partial sum in the fractional-order RDP series");
  if (b == -kInf) return a;
  if (a == b) return -kInf;
  return a + std::log1p(-std::exp(b - a));
}

// log(erfc(x)), also where erfc(x) underflows (x > 26.5): the asymptotic
// series erfc(x) = exp(-x^2) / (x sqrt(pi)) * sum_n (-1)^n (2n-1)!! / (2x^2)^n,
// whose ninth term is below 1e-25 from x = 25 on.
double log_erfc(double x) {
  if (x < 25.0) return std::log(std::erfc(x));
  const double r = 1.0 / (2.0 * x * x);
  double term = 1.0, sum = 1.0;
  for (int n = 1; n < 9; ++n) {
    term *= -(2.0 * n - 1.0) * r;
    sum += term;
  }
  return -x * x - std::log(x) - 0.5 * std::log(M_PI) + std::log(sum);
}

// log A_alpha for integer alpha (Mironov et al. 2019, section 3.3): the
// binomial expansion, a finite sum of positive terms.
double log_a_integer(double q, double sigma, int alpha) {
  const double log_q = std::log(q), log_1q = std::log1p(-q), two_var = 2.0 * sigma * sigma;
  double log_a = -kInf;
  for (int i = 0; i <= alpha; ++i) {
    const double log_binom =
        std::lgamma(alpha + 1.0) - std::lgamma(i + 1.0) - std::lgamma(alpha - i + 1.0);
    const double i2 = static_cast<double>(i) * i;
    log_a = log_add(log_a, log_binom + i * log_q + (alpha - i) * log_1q + (i2 - i) / two_var);
  }
  return log_a;
}

// log A_alpha for fractional alpha: the two half-line integrals split at z0,
// each an infinite series with binomial coefficients of alternating sign past
// i > alpha, summed until both new terms are below e^-30 (as Opacus does).
double log_a_fractional(double q, double sigma, double alpha) {
  const double log_q = std::log(q), log_1q = std::log1p(-q), two_var = 2.0 * sigma * sigma;
  const double z0 = sigma * sigma * std::log(1.0 / q - 1.0) + 0.5;
  const double scale = std::sqrt(2.0) * sigma, log_half = std::log(0.5);
  double log_a0 = -kInf, log_a1 = -kInf;
  double log_coef = 0.0;  // log |binom(alpha, i)|
  bool positive = true;
  for (int i = 0;; ++i) {
    NSS_ASSERT(i < 100000, "privacy", "fractional-order RDP series does not converge");
    const double j = alpha - i;
    const double log_t0 = log_coef + i * log_q + j * log_1q;
    const double log_t1 = log_coef + j * log_q + i * log_1q;
    const double log_e0 = log_half + log_erfc((i - z0) / scale);
    const double log_e1 = log_half + log_erfc((z0 - j) / scale);
    const double log_s0 = log_t0 + (static_cast<double>(i) * i - i) / two_var + log_e0;
    const double log_s1 = log_t1 + (j * j - j) / two_var + log_e1;
    if (positive) {
      log_a0 = log_add(log_a0, log_s0);
      log_a1 = log_add(log_a1, log_s1);
    } else {
      log_a0 = log_sub(log_a0, log_s0);
      log_a1 = log_sub(log_a1, log_s1);
    }
    if (std::max(log_s0, log_s1) < -30.0) break;
    // binom(alpha, i + 1) = binom(alpha, i) * (alpha - i) / (i + 1)
    log_coef += std::log(std::fabs(j)) - std::log(i + 1.0);
    if (j < 0.0) positive = !positive;
  }
  return log_add(log_a0, log_a1);
}

void check_orders(const std::vector<double>& orders) {
  if (orders.empty())
    throw UsageError("privacy", "no RDP orders given", "leave the orders at their default");
  for (double alpha : orders)
    if (!(alpha > 1.0 && alpha <= kMaxOrder))
      throw UsageError("privacy", "RDP order " + std::to_string(alpha) + " is outside (1, 10000]",
                       "use orders like the default 1.1 ... 63");
}

}  // namespace

const std::vector<double>& default_rdp_orders() {
  static const std::vector<double> orders = [] {
    std::vector<double> v;
    for (int x = 1; x < 100; ++x) v.push_back(1.0 + x / 10.0);
    for (int a = 12; a < 64; ++a) v.push_back(a);
    return v;
  }();
  return orders;
}

double subsampled_gaussian_rdp(double q, double sigma, double alpha) {
  if (sigma == 0.0) return kInf;
  if (q == 1.0) return alpha / (2.0 * sigma * sigma);  // the Gaussian mechanism
  const double log_a = alpha == std::floor(alpha) ? log_a_integer(q, sigma, static_cast<int>(alpha))
                                                  : log_a_fractional(q, sigma, alpha);
  return log_a / (alpha - 1.0);
}

RdpEpsilon rdp_epsilon(double q, double sigma, std::int64_t steps, double delta,
                       const std::vector<double>& orders) {
  check_accounting_inputs(q, sigma, steps, delta);
  check_orders(orders);
  if (steps == 0) return {0.0, kNaN};
  if (sigma == 0.0) return {kInf, kNaN};
  RdpEpsilon best{kInf, kNaN};
  for (double alpha : orders) {
    const double rdp = subsampled_gaussian_rdp(q, sigma, alpha) * static_cast<double>(steps);
    const double eps =
        rdp - (std::log(delta) + std::log(alpha)) / (alpha - 1.0) + std::log((alpha - 1.0) / alpha);
    if (eps < best.epsilon) best = {eps, alpha};
  }
  // The conversion can go below 0 for a negligible RDP; epsilon is never negative.
  best.epsilon = std::max(best.epsilon, 0.0);
  return best;
}

}  // namespace nss::privacy
