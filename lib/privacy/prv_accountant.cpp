#include "privacy/prv_accountant.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <iomanip>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "privacy/accounting_inputs.h"
#include "privacy/fft.h"
#include "privacy/rdp_accountant.h"
#include "privacy/subsampled_gaussian_prv.h"

namespace nss::privacy {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Grid point i holds the loss (i - centre) * dt + offset, centre = n/2 - 1.
struct Grid {
  std::int64_t n = 0;
  double dt = 0.0;
  double offset = 0.0;

  std::int64_t centre() const { return n / 2 - 1; }
  double t(double i) const { return (i - static_cast<double>(centre())) * dt + offset; }
};

// Gopi et al.'s domain (remark 5.6, in the form of their code and Opacus's):
// L bounds the composed loss except with probability delta_error / 4 and
// each step's except with delta_error / (8 k), both by RDP; the mesh keeps the
// discretisation error below eps_error. The grid is the smallest power of two
// with mesh <= that over [-L, L], so dt comes out finer.
Grid choose_grid(double q, double sigma, std::int64_t steps, const PrvOptions& options,
                 double delta_error) {
  const double k = static_cast<double>(steps);
  const double composed = rdp_epsilon(q, sigma, steps, delta_error / 4.0).epsilon;
  const double single = rdp_epsilon(q, sigma, 1, delta_error / (8.0 * k)).epsilon;
  const double half_width = std::max({composed, single, options.eps_error}) + 3.0;
  const double mesh = options.eps_error / std::sqrt(k * std::log(12.0 / delta_error) / 2.0);
  const double needed = 2.0 * std::ceil(half_width / mesh) + 2.0;
  double points = 4.0;  // in double: an absurd epsilon must not overflow it
  while (points < needed) points *= 2.0;
  if (points > static_cast<double>(options.max_grid_points)) {
    std::ostringstream message;
    message << "the PRV accountant would need a grid of " << std::setprecision(17) << points
            << " points (limit " << options.max_grid_points << ") for an epsilon near "
            << std::setprecision(4) << composed << " by RDP";
    throw UsageError("privacy", message.str(),
                     "epsilons this large are no privacy guarantee: add noise or take fewer "
                     "steps, or use the RDP accountant or a larger eps_error");
  }
  Grid grid;
  grid.n = static_cast<std::int64_t>(points);
  grid.dt = half_width / static_cast<double>(grid.centre());
  return grid;
}

// The truncated PRV's probability of each cell [t_i - dt/2, t_i + dt/2],
// clipped to [t_0, t_{n-1}] and normalised. Below the median by differences
// of the cdf, above it by differences of the survival function, so that
// neither tail loses its small probabilities to cancellation. Sets the
// grid's offset so that the discrete mean equals the truncated PRV's mean.
std::vector<double> discretise(const SubsampledGaussianPrv& prv, Grid& grid) {
  const std::int64_t n = grid.n;
  const double lo = grid.t(0), hi = grid.t(n - 1);
  auto edge = [&](std::int64_t i) { return i == 0 ? lo : i == n ? hi : grid.t(i - 0.5); };
  std::int64_t split_lo = 0, split_hi = n;  // first edge with cdf >= 1/2
  while (split_lo < split_hi) {
    const std::int64_t mid = (split_lo + split_hi) / 2;
    if (prv.cdf(edge(mid)) < 0.5)
      split_lo = mid + 1;
    else
      split_hi = mid;
  }
  const std::int64_t split = split_lo;
  std::vector<double> pmf(n + 1);
  for (std::int64_t i = 0; i <= n; ++i) pmf[i] = i <= split ? prv.cdf(edge(i)) : prv.sf(edge(i));
  const double sf_at_split = prv.sf(edge(split));
  double mass = 0.0, mean = 0.0;
  for (std::int64_t i = 0; i < n; ++i) {
    // In place: cell i needs edges i and i + 1, and edge i is not needed again.
    const double left = i == split ? sf_at_split : pmf[i];
    pmf[i] = i < split ? pmf[i + 1] - left : left - pmf[i + 1];
    mass += pmf[i];
    mean += grid.t(i) * pmf[i];
  }
  pmf.pop_back();
  for (double& p : pmf) p /= mass;
  const double shift = prv.partial_mean(lo, hi) / mass - mean / mass;
  NSS_ASSERT(std::fabs(shift) < grid.dt / 2, "privacy",
             "the discretised PRV's mean is off by more than half a cell");
  grid.offset = shift;
  return pmf;
}

// The pmf of the sum of k independent copies: the k-th power of the
// characteristic function, by a circular convolution on the same n points.
// The sum of indices s lands at k * t_min + s dt, which is grid point
// s - (k - 1) * centre: rotate by that; the offset adds up k times.
std::vector<double> compose(std::vector<double> pmf, Grid& grid, std::int64_t k) {
  const RealFft fft(pmf.size());
  std::vector<std::complex<double>> spectrum = fft.forward(pmf);
  std::vector<double>().swap(pmf);  // the largest grids take hundreds of MB
  const double power = static_cast<double>(k);
  for (auto& z : spectrum) {
    const double r = std::abs(z);
    if (r > 0.0) z = std::polar(std::exp(power * std::log(r)), power * std::arg(z));
  }
  std::vector<double> sum = fft.inverse(spectrum);
  const std::int64_t n = grid.n;
  const std::int64_t rotation = ((k - 1) % n) * grid.centre() % n;
  std::rotate(sum.begin(), sum.begin() + rotation, sum.end());
  grid.offset *= power;
  return sum;
}

// Smallest epsilon >= 0 with delta(epsilon) = sum_{t_i > eps} p_i (1 - e^{eps - t_i})
// <= target, for three targets at once (ascending). Scans down from the top
// with d1 = sum_{j >= i} p_j and d2 = sum_{j >= i} p_j e^{t_i - t_j}, so no
// exponential overflows; between grid points delta(eps) has the closed form
// d1 - e^{eps - t_i} d2 over the same points, solved for eps (as Opacus does).
std::vector<double> epsilons_for(const std::vector<double>& pmf, const Grid& grid,
                                 const std::vector<double>& targets) {
  const std::int64_t n = grid.n;
  std::vector<double> eps(targets.size(), -kInf);
  const long double decay = std::exp(-static_cast<long double>(grid.dt));
  long double d1 = 0.0L, d2 = 0.0L, prev_d1 = 0.0L, prev_d2 = 0.0L;
  std::size_t open = targets.size();  // targets[0 .. open) not yet passed
  for (std::int64_t i = n - 1; i >= 0 && open > 0; --i) {
    prev_d1 = d1;
    prev_d2 = d2;
    d1 += pmf[i];
    d2 = d2 * decay + pmf[i];
    const long double delta = d1 - d2;  // delta(t_i)
    while (open > 0 && delta > targets[open - 1]) {
      // delta(t_{i+1}) <= target < delta(t_i): solve on the points above i.
      const double ratio = static_cast<double>((prev_d1 - targets[open - 1]) / prev_d2);
      eps[open - 1] = grid.t(i + 1) + std::log(ratio);
      --open;
    }
  }
  for (double& e : eps) e = std::max(e, 0.0);  // delta(t_0) <= target: epsilon 0
  return eps;
}

void check_options(const PrvOptions& options, double delta, double delta_error) {
  if (!(options.eps_error > 0.0 && options.eps_error < 1.0))
    throw UsageError("privacy",
                     "PRV eps_error " + std::to_string(options.eps_error) + " is outside (0, 1)",
                     "the default 0.01 is a good choice");
  if (!(delta_error > 0.0 && delta_error < delta))
    throw UsageError("privacy", "PRV delta_error is outside (0, delta)",
                     "leave it at 0 for delta / 1000");
  if (options.max_grid_points < 4)
    throw UsageError("privacy", "PRV max_grid_points is below 4", "leave it at its default");
}

}  // namespace

PrvEpsilon prv_epsilon(double q, double sigma, std::int64_t steps, double delta,
                       const PrvOptions& options) {
  check_accounting_inputs(q, sigma, steps, delta);
  const double delta_error = options.delta_error > 0.0 ? options.delta_error : delta / 1000.0;
  check_options(options, delta, delta_error);
  if (steps == 0) return {};
  if (sigma == 0.0) return {kInf, kInf, kInf, 0};
  Grid grid = choose_grid(q, sigma, steps, options, delta_error);
  if (static_cast<double>(grid.n) * std::numeric_limits<double>::epsilon() >= delta - delta_error)
    throw UsageError("privacy", "delta is too small for the PRV grid's floating-point precision",
                     "use a larger delta, or the RDP accountant");
  const SubsampledGaussianPrv prv(q, sigma);
  const std::vector<double> composed = compose(discretise(prv, grid), grid, steps);
  const std::vector<double> eps =
      epsilons_for(composed, grid, {delta - delta_error, delta, delta + delta_error});
  return {std::max(eps[2] - options.eps_error, 0.0), eps[1], eps[0] + options.eps_error, grid.n};
}

}  // namespace nss::privacy
