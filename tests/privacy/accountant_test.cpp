#include "privacy/accountant.h"

#include <cmath>
#include <limits>
#include <string>

#include <gtest/gtest.h>

#include "core/error.h"

namespace nss::privacy {
namespace {

constexpr AccountantKind kKinds[] = {AccountantKind::kRdp, AccountantKind::kPrv};

// The UsageError's text, or "" when `call` does not throw one.
template <typename Call>
std::string usage_error(Call call) {
  try {
    call();
  } catch (const UsageError& e) {
    EXPECT_EQ(e.component(), "privacy");
    EXPECT_FALSE(e.hint().empty()) << e.what();
    return e.what();
  }
  return "";
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(AccountantTest, KindNamesRoundTrip) {
  for (AccountantKind kind : kKinds)
    EXPECT_EQ(parse_accountant_kind(accountant_kind_name(kind)), kind);
  EXPECT_TRUE(contains(usage_error([] { parse_accountant_kind("gdp"); }), "unknown accountant"));
}

TEST(AccountantTest, EpsilonIsTheUpperBound) {
  const EpsilonBounds rdp = epsilon_bounds(AccountantKind::kRdp, 0.01, 1.0, 1000, 1e-5);
  EXPECT_EQ(rdp.lower, rdp.upper);
  EXPECT_EQ(epsilon(AccountantKind::kRdp, 0.01, 1.0, 1000, 1e-5), rdp.upper);
  const EpsilonBounds prv = epsilon_bounds(AccountantKind::kPrv, 0.01, 1.0, 1000, 1e-5);
  EXPECT_LT(prv.lower, prv.estimate);
  EXPECT_LT(prv.estimate, prv.upper);
  EXPECT_EQ(epsilon(AccountantKind::kPrv, 0.01, 1.0, 1000, 1e-5), prv.upper);
}

TEST(AccountantTest, EdgeCases) {
  for (AccountantKind kind : kKinds) {
    EXPECT_EQ(epsilon(kind, 0.01, 1.0, 0, 1e-5), 0.0);
    EXPECT_EQ(epsilon(kind, 0.01, 0.0, 10, 1e-5), std::numeric_limits<double>::infinity());
    const double full_batch = epsilon(kind, 1.0, 5.0, 100, 1e-5);
    EXPECT_TRUE(std::isfinite(full_batch));
    EXPECT_GT(full_batch, epsilon(kind, 0.5, 5.0, 100, 1e-5));
  }
}

TEST(AccountantTest, ResumeContinuesEpsilonExactly) {
  // A checkpoint stores (kind, q, sigma, steps); a resumed run that reaches the
  // same step count reports the same epsilon, bit for bit.
  for (AccountantKind kind : kKinds) {
    const double straight = epsilon(kind, 0.004, 1.1, 1500, 1e-6);
    const std::string saved = accountant_kind_name(kind);
    const std::int64_t steps_at_save = 600;
    const double resumed =
        epsilon(parse_accountant_kind(saved), 0.004, 1.1, steps_at_save + 900, 1e-6);
    EXPECT_EQ(resumed, straight);
  }
}

TEST(AccountantTest, InvalidInputsThrowWithTheReason) {
  for (AccountantKind kind : kKinds) {
    EXPECT_TRUE(
        contains(usage_error([&] { epsilon(kind, 0.0, 1.0, 10, 1e-5); }), "outside (0, 1]"));
    EXPECT_TRUE(contains(usage_error([&] { epsilon(kind, 1.5, 1.0, 10, 1e-5); }), "q = 1.5"));
    EXPECT_TRUE(contains(usage_error([&] { epsilon(kind, std::nan(""), 1.0, 10, 1e-5); }), "q ="));
    EXPECT_TRUE(contains(usage_error([&] { epsilon(kind, 0.01, -1.0, 10, 1e-5); }), "noise"));
    EXPECT_TRUE(contains(usage_error([&] { epsilon(kind, 0.01, 1.0, -1, 1e-5); }), "negative"));
    EXPECT_TRUE(contains(usage_error([&] { epsilon(kind, 0.01, 1.0, 10, 0.0); }), "delta = 0"));
    EXPECT_TRUE(contains(usage_error([&] { epsilon(kind, 0.01, 1.0, 10, 1.0); }), "delta = 1"));
    EXPECT_TRUE(
        contains(usage_error([&] { calibrate_noise_multiplier(kind, 0.01, 10, 1e-5, 0.0); }),
                 "target epsilon 0"));
    EXPECT_TRUE(contains(usage_error([&] { calibrate_noise_multiplier(kind, 0.0, 10, 1e-5, 1.0); }),
                         "sampling rate"));
  }
}

TEST(AccountantTest, CalibrationMeetsTheTargetFromBelow) {
  struct Case {
    double q;
    std::int64_t steps;
    double delta, target;
  };
  for (AccountantKind kind : kKinds)
    for (const Case& c : {Case{0.01, 1000, 1e-5, 2.0}, Case{0.001, 10000, 1e-6, 1.0},
                          Case{0.1, 300, 1e-5, 8.0}, Case{1.0, 50, 1e-5, 4.0}}) {
      SCOPED_TRACE(std::string(accountant_kind_name(kind)) + " q " + std::to_string(c.q));
      const double sigma = calibrate_noise_multiplier(kind, c.q, c.steps, c.delta, c.target);
      const double eps = epsilon(kind, c.q, sigma, c.steps, c.delta);
      EXPECT_LE(eps, c.target);
      EXPECT_GT(eps, 0.99 * c.target);  // within the 1e-3 tolerance on sigma
      EXPECT_GT(epsilon(kind, c.q, sigma / 1.002, c.steps, c.delta), c.target);
    }
}

TEST(AccountantTest, PrvNeedsLessNoiseThanRdp) {
  const double rdp = calibrate_noise_multiplier(AccountantKind::kRdp, 0.01, 1000, 1e-5, 2.0);
  const double prv = calibrate_noise_multiplier(AccountantKind::kPrv, 0.01, 1000, 1e-5, 2.0);
  EXPECT_LT(prv, rdp);
}

TEST(AccountantTest, CalibrationWithoutStepsNeedsNoNoise) {
  for (AccountantKind kind : kKinds)
    EXPECT_EQ(calibrate_noise_multiplier(kind, 0.01, 0, 1e-5, 1.0), 0.0);
}

TEST(AccountantTest, UnreachableTargetSaysSo) {
  CalibrationOptions options;
  options.max_noise_multiplier = 2.0;
  for (AccountantKind kind : kKinds) {
    const std::string what =
        usage_error([&] { calibrate_noise_multiplier(kind, 0.1, 10000, 1e-5, 0.5, options); });
    EXPECT_TRUE(contains(what, "out of reach")) << what;
    EXPECT_TRUE(contains(what, "noise multiplier 2")) << what;
  }
}

}  // namespace
}  // namespace nss::privacy
