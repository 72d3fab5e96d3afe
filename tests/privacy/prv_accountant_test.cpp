#include "privacy/prv_accountant.h"

#include <cmath>
#include <limits>
#include <string>

#include <gtest/gtest.h>

#include "core/error.h"
#include "privacy/rdp_accountant.h"
#include "privacy/subsampled_gaussian_prv.h"

namespace nss::privacy {
namespace {

double normal_cdf(double x) {
  return 0.5 * std::erfc(-x / std::sqrt(2.0));
}

// Exact epsilon(delta) of the Gaussian mechanism with sensitivity 1 and noise
// sigma (Balle & Wang 2018, theorem 8): delta(eps) = Phi(-eps/mu + mu/2)
// - e^eps Phi(-eps/mu - mu/2) with mu = 1/sigma, decreasing in eps.
double gaussian_mechanism_epsilon(double sigma, double delta) {
  const double mu = 1.0 / sigma;
  auto delta_at = [mu](double eps) {
    return normal_cdf(-eps / mu + mu / 2) - std::exp(eps) * normal_cdf(-eps / mu - mu / 2);
  };
  double lo = 0.0, hi = 100.0;
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (lo + hi);
    (delta_at(mid) > delta ? lo : hi) = mid;
  }
  return hi;
}

TEST(SubsampledGaussianPrvTest, CdfAndSurvivalAddUpToOne) {
  const SubsampledGaussianPrv prv(0.01, 0.8);
  for (double t : {-1.0, std::log1p(-0.01), -1e-3, 0.0, 1e-3, 0.5, 3.0, 40.0}) {
    EXPECT_NEAR(prv.cdf(t) + prv.sf(t), 1.0, 1e-15) << t;
  }
  EXPECT_EQ(prv.cdf(-1.0), 0.0);  // below the support, log(1 - q)
  EXPECT_GT(prv.sf(40.0), 0.0);   // no cancellation in the upper tail
}

TEST(SubsampledGaussianPrvTest, FullBatchMeanIsTheGaussianKlDivergence) {
  // q = 1: the loss is N(1/(2 sigma^2), 1/sigma^2).
  const double inf = std::numeric_limits<double>::infinity();
  for (double sigma : {0.5, 1.0, 4.0}) {
    const SubsampledGaussianPrv prv(1.0, sigma);
    EXPECT_NEAR(prv.partial_mean(-inf, inf), 1.0 / (2 * sigma * sigma), 1e-13);
  }
}

TEST(SubsampledGaussianPrvTest, PartialMeansAddUp) {
  const SubsampledGaussianPrv prv(0.05, 0.9);
  const double whole = prv.partial_mean(-5.0, 5.0);
  EXPECT_NEAR(prv.partial_mean(-5.0, 0.01) + prv.partial_mean(0.01, 5.0), whole, 1e-15);
  EXPECT_GT(whole, 0.0);  // a KL divergence
}

TEST(PrvAccountantTest, FullBatchMatchesTheAnalyticGaussianMechanism) {
  // k steps at q = 1 are one Gaussian mechanism with noise sigma / sqrt(k).
  for (double sigma : {1.0, 4.0, 20.0})
    for (std::int64_t steps : {1, 10, 100})
      for (double delta : {1e-5, 1e-6}) {
        const double exact = gaussian_mechanism_epsilon(sigma / std::sqrt(double(steps)), delta);
        const PrvEpsilon got = prv_epsilon(1.0, sigma, steps, delta);
        EXPECT_LE(got.lower, exact);
        EXPECT_GE(got.upper, exact);
        EXPECT_NEAR(got.estimate, exact, 1e-3 + 1e-4 * exact)
            << "sigma " << sigma << " steps " << steps << " delta " << delta;
      }
}

TEST(PrvAccountantTest, BracketsDpAccountingsPld) {
  // dp-accounting 0.6.0 from_gaussian_mechanism(sigma, sampling_prob=q,
  // value_discretization_interval=1e-5), composed: the optimistic and the
  // pessimistic estimate, a bracket around the true epsilon.
  struct Case {
    double q, sigma;
    std::int64_t steps;
    double delta, lower, upper;
  };
  for (const Case& c : {Case{0.01, 1.0, 1000, 1e-5, 1.8232366970144065, 1.828236737071951},
                        Case{0.001, 0.6, 10000, 1e-6, 3.1022687555656905, 3.1521915527391484}}) {
    const PrvEpsilon got = prv_epsilon(c.q, c.sigma, c.steps, c.delta);
    EXPECT_LE(got.lower, c.upper);
    EXPECT_GE(got.upper, c.lower);
    EXPECT_NEAR(got.estimate, c.upper, 0.01 * c.upper);
  }
}

TEST(PrvAccountantTest, IsTighterThanRdp) {
  for (double q : {0.001, 0.01, 0.1})
    for (double sigma : {0.8, 2.0}) {
      const double rdp = rdp_epsilon(q, sigma, 1000, 1e-5).epsilon;
      EXPECT_LT(prv_epsilon(q, sigma, 1000, 1e-5).upper, rdp) << q << " " << sigma;
    }
}

TEST(PrvAccountantTest, BoundsWidenByTheStatedErrors) {
  PrvOptions tight;
  tight.eps_error = 0.002;
  const PrvEpsilon coarse = prv_epsilon(0.02, 1.0, 500, 1e-5);
  const PrvEpsilon fine = prv_epsilon(0.02, 1.0, 500, 1e-5, tight);
  EXPECT_LE(coarse.lower, coarse.estimate);
  EXPECT_LE(coarse.estimate + 0.01, coarse.upper);
  EXPECT_GT(fine.grid_points, coarse.grid_points);
  EXPECT_LE(fine.upper, coarse.upper);
  EXPECT_NEAR(fine.estimate, coarse.estimate, 0.01);
}

TEST(PrvAccountantTest, EpsilonGrowsWithStepsAndRateAndFallsWithNoise) {
  double last = 0.0;
  for (std::int64_t steps : {1, 10, 100, 1000, 10000}) {
    const double eps = prv_epsilon(0.01, 1.0, steps, 1e-5).estimate;
    EXPECT_GT(eps, last) << steps;
    last = eps;
  }
  last = 0.0;
  for (double q : {0.001, 0.01, 0.1, 1.0}) {
    const double eps = prv_epsilon(q, 1.0, 100, 1e-5).estimate;
    EXPECT_GT(eps, last) << q;
    last = eps;
  }
  last = std::numeric_limits<double>::infinity();
  for (double sigma : {0.6, 0.8, 1.0, 2.0, 5.0}) {
    const double eps = prv_epsilon(0.01, sigma, 1000, 1e-5).estimate;
    EXPECT_LT(eps, last) << sigma;
    last = eps;
  }
}

TEST(PrvAccountantTest, NoStepsIsZeroAndNoNoiseIsInfinite) {
  const PrvEpsilon none = prv_epsilon(0.01, 1.0, 0, 1e-5);
  EXPECT_EQ(none.upper, 0.0);
  EXPECT_EQ(none.grid_points, 0);
  EXPECT_TRUE(std::isinf(prv_epsilon(0.01, 0.0, 10, 1e-5).upper));
}

TEST(PrvAccountantTest, RefusesGridsAboveTheLimit) {
  PrvOptions small;
  small.max_grid_points = 1 << 12;
  try {
    prv_epsilon(0.01, 1.0, 1000, 1e-5, small);
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("would need a grid of"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("(limit 4096)"), std::string::npos) << e.what();
    EXPECT_FALSE(e.hint().empty());
  }
}

TEST(PrvAccountantTest, RejectsInvalidOptions) {
  PrvOptions bad;
  bad.eps_error = 0.0;
  EXPECT_THROW(prv_epsilon(0.01, 1.0, 10, 1e-5, bad), UsageError);
  bad = {};
  bad.delta_error = 2e-5;  // above delta
  EXPECT_THROW(prv_epsilon(0.01, 1.0, 10, 1e-5, bad), UsageError);
}

}  // namespace
}  // namespace nss::privacy
