#include "privacy/privacy_plan.h"

#include <cmath>

#include "core/error.h"

namespace nss::privacy {

double PrivacyPlan::epsilon_after(std::int64_t steps) const {
  return epsilon(accountant, sampling_rate, noise_multiplier, steps, delta);
}

nlohmann::json PrivacyPlan::settings() const {
  return {{"accountant", accountant_kind_name(accountant)},
          {"sampling", poisson ? "poisson" : "shuffle"},
          {"units", units},
          {"sampling_rate", sampling_rate},
          {"noise_multiplier", noise_multiplier},
          {"max_grad_norm", max_grad_norm},
          {"delta", delta}};
}

double clipping_norm(const config::Config& config) {
  return config.privacy.max_grad_norm;
}

PrivacyPlan plan_privacy(const config::Config& config, std::int64_t units) {
  const config::PrivacyConfig& p = config.privacy;
  const std::int64_t batch = config.training.global_batch_size;
  if (units <= 0)
    throw DataError("privacy", "the training data holds no example (privacy unit)",
                    "prepare a dataset with at least one document (docs/data.md)");
  if (batch > units)
    throw DataError("privacy",
                    "training.global_batch_size (" + std::to_string(batch) +
                        ") exceeds the privacy units of the data (" + std::to_string(units) +
                        "): the sampling rate q = B / n would exceed 1",
                    "lower training.global_batch_size to at most " + std::to_string(units));
  PrivacyPlan plan;
  plan.units = units;
  plan.sampling_rate = static_cast<double>(batch) / static_cast<double>(units);
  plan.expected_batch = static_cast<double>(batch);
  plan.max_grad_norm = clipping_norm(config);
  // Opacus's and NeMo Safe Synthesizer's default: delta well below 1 / n.
  plan.delta = p.delta.value ? *p.delta.value : std::pow(static_cast<double>(units), -1.2);
  plan.accountant =
      p.accountant == config::PrivacyAccountant::kRdp ? AccountantKind::kRdp : AccountantKind::kPrv;
  plan.poisson = p.sampling == config::PrivacySampling::kPoisson;
  plan.planned_steps = config.training.max_steps;
  plan.calibrated = p.noise_multiplier == 0;
  plan.noise_multiplier =
      plan.calibrated ? calibrate_noise_multiplier(plan.accountant, plan.sampling_rate,
                                                   plan.planned_steps, plan.delta, p.target_epsilon)
                      : p.noise_multiplier;
  return plan;
}

}  // namespace nss::privacy
