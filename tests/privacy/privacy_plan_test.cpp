// privacy::plan_privacy: q = B / n, delta auto = n^-1.2, sigma calibrated so
// that max_steps spend the target (or given), and the refusals.
#include "privacy/privacy_plan.h"

#include <cmath>

#include <gtest/gtest.h>

#include "config/load.h"
#include "core/error.h"

namespace nss::privacy {
namespace {

config::Config private_config(const std::string& privacy = "{enabled: true}") {
  return config::parse_config_text(
      "training: {lora: {enabled: true}, global_batch_size: 50, max_steps: 300}\n"
      "data: {packing: none}\nprivacy: " +
          privacy + "\n",
      "test");
}

TEST(PrivacyPlan, CalibratesSigmaSoThatMaxStepsSpendTheTarget) {
  const PrivacyPlan plan = plan_privacy(private_config(), 10000);
  EXPECT_EQ(plan.units, 10000);
  EXPECT_DOUBLE_EQ(plan.sampling_rate, 0.005);
  EXPECT_DOUBLE_EQ(plan.expected_batch, 50);
  EXPECT_DOUBLE_EQ(plan.delta, std::pow(10000.0, -1.2));
  EXPECT_TRUE(plan.calibrated);
  EXPECT_TRUE(plan.poisson);
  EXPECT_EQ(plan.accountant, AccountantKind::kPrv);
  EXPECT_DOUBLE_EQ(plan.max_grad_norm, 1.0);
  const double spent = plan.epsilon_after(300);
  EXPECT_LE(spent, 8.0);
  EXPECT_GT(spent, 7.9);
  EXPECT_LT(plan.epsilon_after(150), spent);
  EXPECT_EQ(plan.settings()["noise_multiplier"], plan.noise_multiplier);
  EXPECT_EQ(plan.settings()["accountant"], "prv");
  EXPECT_FALSE(plan.settings().contains("privacy_key"));
}

TEST(PrivacyPlan, GivenSigmaAndExplicitDelta) {
  const PrivacyPlan plan = plan_privacy(
      private_config("{enabled: true, noise_multiplier: 1.1, delta: 1e-6, accountant: rdp, "
                     "sampling: shuffle, max_grad_norm: 0.3}"),
      1000);
  EXPECT_FALSE(plan.calibrated);
  EXPECT_DOUBLE_EQ(plan.noise_multiplier, 1.1);
  EXPECT_DOUBLE_EQ(plan.delta, 1e-6);
  EXPECT_DOUBLE_EQ(plan.max_grad_norm, 0.3);
  EXPECT_EQ(plan.accountant, AccountantKind::kRdp);
  EXPECT_FALSE(plan.poisson);
  EXPECT_DOUBLE_EQ(plan.epsilon_after(300), epsilon(AccountantKind::kRdp, 0.05, 1.1, 300, 1e-6));
}

TEST(PrivacyPlan, RefusesWhatCannotBeMet) {
  EXPECT_THROW(plan_privacy(private_config(), 0), DataError);
  try {
    plan_privacy(private_config(), 49);
    ADD_FAILURE() << "a batch larger than the data was accepted";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("global_batch_size (50)"), std::string::npos) << e.what();
  }
  EXPECT_THROW(plan_privacy(private_config("{enabled: true, target_epsilon: 0.0001}"), 100),
               UsageError);
}

}  // namespace
}  // namespace nss::privacy
