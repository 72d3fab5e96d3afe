// What a private run holds beyond the model (docs/privacy.md): its plan
// (q, sigma, C, delta, accountant), its secret key — drawn from rank 0's
// /dev/urandom at the first start, kept only in checkpoints' "secrets" — and
// the privacy spent so far. It saves its key itself, as the secret section
// secrets.privacy_key (checkpoint/stateful_component.h); the plan's section
// is PrivacyPlanSection's.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "checkpoint/stateful_component.h"
#include "comm/communicator.h"
#include "config/config.h"
#include "privacy/privacy_plan.h"
#include "privacy/secret_key.h"
#include "train/private_step.h"

namespace nss::train {

class PrivateTraining final : public checkpoint::StatefulComponent, public PrivateStepSource {
 public:
  /// The plan over the training data's `units` (UsageError, exit 2, when it
  /// cannot be met: see privacy::plan_privacy); `comm` draws a fresh key.
  PrivateTraining(const config::Config& config, std::int64_t units, comm::Communicator& comm);

  const privacy::PrivacyPlan& plan() const { return plan_; }

  std::string name() const override;
  bool secret() const override { return true; }
  /// The key, as hex.
  nlohmann::json state() const override;
  /// The key: the resumed step's, or on a fresh start (nothing) one drawn
  /// by rank 0 and sent to every rank (collective). Exit 5 when a resumed
  /// step lacks it.
  void load(const std::optional<nlohmann::json>& saved) override;

  privacy::PoissonKey poisson_key() const;

  /// The settings of step `step` for run_private_step: the plan's C, sigma
  /// and q·n, the run's noise key.
  PrivateStepSettings step_settings(std::int64_t step, std::int64_t micro_steps, double lr,
                                    std::function<void()> before_update) const override;

  /// Epsilon spent after `steps` steps (skipped steps count: they were sampled).
  double epsilon_after(std::int64_t steps) const { return plan_.epsilon_after(steps); }

 private:
  privacy::PrivacyPlan plan_;
  comm::Communicator& comm_;
  std::optional<privacy::SecretKey> key_;
  std::optional<privacy::NoiseKey> noise_key_;
};

}  // namespace nss::train
