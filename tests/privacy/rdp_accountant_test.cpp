#include "privacy/rdp_accountant.h"

#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "core/error.h"

namespace nss::privacy {
namespace {

TEST(RdpAccountantTest, DefaultOrdersAreOpacusDefaultAlphas) {
  const auto& orders = default_rdp_orders();
  ASSERT_EQ(orders.size(), 99u + 52u);
  EXPECT_DOUBLE_EQ(orders.front(), 1.1);
  EXPECT_DOUBLE_EQ(orders[98], 10.9);
  EXPECT_EQ(orders[99], 12.0);
  EXPECT_EQ(orders.back(), 63.0);
}

TEST(RdpAccountantTest, FullBatchIsTheGaussianMechanism) {
  for (double sigma : {0.5, 1.0, 3.0})
    for (double alpha : {1.5, 2.0, 32.0})
      EXPECT_EQ(subsampled_gaussian_rdp(1.0, sigma, alpha), alpha / (2.0 * sigma * sigma));
}

TEST(RdpAccountantTest, OrderTwoHasAClosedForm) {
  // A_2 = E_Q[(P/Q)^2] = 1 + q^2 (e^{1/sigma^2} - 1).
  for (double q : {0.001, 0.05, 0.5})
    for (double sigma : {0.7, 1.0, 2.0}) {
      const double want = std::log1p(q * q * std::expm1(1.0 / (sigma * sigma)));
      EXPECT_NEAR(subsampled_gaussian_rdp(q, sigma, 2.0), want, 1e-14 + 1e-12 * want);
    }
}

TEST(RdpAccountantTest, FractionalSeriesMeetsTheIntegerSum) {
  for (double alpha : {2.0, 3.0, 8.0}) {
    const double at = subsampled_gaussian_rdp(0.02, 0.9, alpha);
    EXPECT_NEAR(subsampled_gaussian_rdp(0.02, 0.9, alpha - 1e-7), at, 1e-6 * at);
    EXPECT_NEAR(subsampled_gaussian_rdp(0.02, 0.9, alpha + 1e-7), at, 1e-6 * at);
  }
}

TEST(RdpAccountantTest, MatchesOpacusPerStep) {
  // opacus 1.4.0 compute_rdp(q=0.01, noise_multiplier=0.8, steps=1, orders=[a]).
  const double want[][2] = {{1.5, 0.0002733106999012212},
                            {2.5, 0.0004894537157368544},
                            {7.3, 0.3881135460639038},
                            {20.0, 10.777452435815334}};
  for (const auto& [alpha, rdp] : want)
    EXPECT_NEAR(subsampled_gaussian_rdp(0.01, 0.8, alpha), rdp, 1e-9 * rdp) << alpha;
}

TEST(RdpAccountantTest, MatchesOpacusEpsilon) {
  // opacus 1.4.0 get_privacy_spent(compute_rdp(...), DEFAULT_ALPHAS, delta).
  struct Case {
    double q, sigma;
    std::int64_t steps;
    double delta, epsilon, order;
  };
  for (const Case& c : {Case{0.01, 1.0, 1000, 1e-5, 2.1013652716430564, 7.8},
                        Case{0.001, 0.6, 10000, 1e-6, 3.9991305068321434, 4.4},
                        Case{0.1, 2.0, 100, 1e-5, 2.5805688086608938, 7.6}}) {
    const RdpEpsilon got = rdp_epsilon(c.q, c.sigma, c.steps, c.delta);
    EXPECT_NEAR(got.epsilon, c.epsilon, 1e-9 * c.epsilon);
    EXPECT_DOUBLE_EQ(got.order, c.order);
  }
}

TEST(RdpAccountantTest, EpsilonGrowsWithStepsAndRateAndFallsWithNoise) {
  double last = 0.0;
  for (std::int64_t steps : {1, 10, 100, 1000, 10000}) {
    const double eps = rdp_epsilon(0.01, 1.0, steps, 1e-5).epsilon;
    EXPECT_GT(eps, last);
    last = eps;
  }
  last = 0.0;
  for (double q : {0.0001, 0.001, 0.01, 0.1, 1.0}) {
    const double eps = rdp_epsilon(q, 1.0, 100, 1e-5).epsilon;
    EXPECT_GT(eps, last);
    last = eps;
  }
  last = std::numeric_limits<double>::infinity();
  for (double sigma : {0.5, 0.8, 1.0, 2.0, 5.0}) {
    const double eps = rdp_epsilon(0.01, sigma, 1000, 1e-5).epsilon;
    EXPECT_LT(eps, last);
    last = eps;
  }
}

TEST(RdpAccountantTest, NoStepsIsZeroAndNoNoiseIsInfinite) {
  EXPECT_EQ(rdp_epsilon(0.01, 1.0, 0, 1e-5).epsilon, 0.0);
  EXPECT_EQ(rdp_epsilon(0.01, 0.0, 0, 1e-5).epsilon, 0.0);
  EXPECT_TRUE(std::isinf(rdp_epsilon(0.01, 0.0, 1, 1e-5).epsilon));
  EXPECT_TRUE(std::isinf(rdp_epsilon(1.0, 0.0, 100, 1e-5).epsilon));
}

TEST(RdpAccountantTest, RejectsOrdersOutsideTheRange) {
  EXPECT_THROW(rdp_epsilon(0.01, 1.0, 10, 1e-5, {}), UsageError);
  EXPECT_THROW(rdp_epsilon(0.01, 1.0, 10, 1e-5, {1.0, 2.0}), UsageError);
  EXPECT_THROW(rdp_epsilon(0.01, 1.0, 10, 1e-5, {2.0, 1e5}), UsageError);
}

}  // namespace
}  // namespace nss::privacy
