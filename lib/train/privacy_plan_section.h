// The privacy plan as a stateful component (checkpoint/stateful_component.h):
// state.privacy holds a private run's PrivacyPlan::settings(), which a resume
// must match. Every run registers it, private or not, so that a resume
// cannot switch privacy on or off either.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "checkpoint/stateful_component.h"
#include "privacy/privacy_plan.h"

namespace nss::train {

class PrivacyPlanSection final : public checkpoint::StatefulComponent {
 public:
  /// `plan`: a private run's (borrowed); nullptr when privacy is off.
  explicit PrivacyPlanSection(const privacy::PrivacyPlan* plan) : plan_(plan) {}

  std::string name() const override { return privacy::kPlanSection; }
  nlohmann::json state() const override { return plan_ ? plan_->settings() : nlohmann::json(); }
  // The plan follows the configuration; the resume compared it already.
  void load(const std::optional<nlohmann::json>&) override {}
  // The guarantee covers one mechanism: q, sigma, C and delta fixed from the first step.
  const char* resume_mismatch() const override {
    return "the checkpoint was trained with other privacy settings (or with privacy off/on; a "
           "calibrated noise_multiplier follows training.max_steps and privacy.target_epsilon)";
  }

 private:
  const privacy::PrivacyPlan* plan_;
};

}  // namespace nss::train
