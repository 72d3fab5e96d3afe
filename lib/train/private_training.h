// What a private run holds beyond the model (docs/privacy.md): its plan
// (q, sigma, C, delta, accountant), its secret key — drawn from rank 0's
// /dev/urandom at the first start, kept only in checkpoints' "secrets" — and
// the privacy spent so far.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>

#include <nlohmann/json.hpp>

#include "comm/communicator.h"
#include "config/config.h"
#include "privacy/privacy_plan.h"
#include "privacy/secret_key.h"
#include "train/private_step.h"

namespace nss::train {

class PrivateTraining {
 public:
  /// The plan over the training data's `units` (UsageError, exit 2, when it
  /// cannot be met: see privacy::plan_privacy).
  PrivateTraining(const config::Config& config, std::int64_t units);

  const privacy::PrivacyPlan& plan() const { return plan_; }

  /// The key: the resumed step's (`resumed_secrets`, its metadata.json
  /// "secrets"), or on a fresh start (nullptr) one drawn by rank 0 and sent
  /// to every rank (collective). Exit 5 when a resumed step lacks it.
  void resolve_key(comm::Communicator& comm, const nlohmann::json* resumed_secrets);
  /// What a checkpoint keeps beside its state: {"privacy_key": hex}.
  nlohmann::json secrets() const;
  privacy::PoissonKey poisson_key() const;

  /// The settings of step `step` for run_private_step.
  PrivateStepSettings step_settings(std::int64_t step, std::int64_t micro_steps, double lr,
                                    std::function<void()> before_update) const;

  /// Epsilon spent after `steps` steps (skipped steps count: they were sampled).
  double epsilon_after(std::int64_t steps) const { return plan_.epsilon_after(steps); }

 private:
  privacy::PrivacyPlan plan_;
  std::optional<privacy::SecretKey> key_;
  std::optional<privacy::NoiseKey> noise_key_;
};

}  // namespace nss::train
