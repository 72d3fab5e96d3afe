#include "train/training_step_runner.h"

#include <spdlog/spdlog.h>

#include "comm/agreement.h"
#include "train/privacy_plan_section.h"
#include "train/private_training.h"
#include "train/training_checkpoints.h"

namespace nss::train {
namespace {

// What a private run logs once at its start (never the key).
void log_privacy_plan(const PrivateTraining& privacy, const config::Config& config) {
  const privacy::PrivacyPlan& p = privacy.plan();
  spdlog::info(
      "[privacy] DP-SGD over {} privacy units: q = {:.4g} (expected batch {}), sigma = {:.4g} "
      "({}), C = {}, delta = {:.3g}, {} accountant; epsilon after {} steps: {:.3f}",
      p.units, p.sampling_rate, p.expected_batch, p.noise_multiplier,
      p.calibrated ? "calibrated to privacy.target_epsilon" : "privacy.noise_multiplier",
      p.max_grad_norm, p.delta, privacy::accountant_kind_name(p.accountant), p.planned_steps,
      privacy.epsilon_after(p.planned_steps));
  if (config.training.grad_clip > 0)
    spdlog::info(
        "[privacy] training.grad_clip is not applied: each example's gradient is clipped to "
        "privacy.max_grad_norm instead");
  if (!p.poisson)
    spdlog::warn(
        "[privacy] privacy.sampling: shuffle draws fixed-size batches, but the reported epsilon "
        "assumes Poisson sampling: it is not a proven guarantee for this run");
}

// The usual step, which registers the (absent) privacy plan's section.
class TrainingOrdinaryStep final : public OrdinaryStepRunner {
 public:
  using OrdinaryStepRunner::OrdinaryStepRunner;
  void register_state(TrainingCheckpoints& checkpoints) override {
    checkpoints.register_component(plan_section_);
  }

 private:
  PrivacyPlanSection plan_section_{nullptr};
};

class TrainingPrivateStep final : public StepRunner {
 public:
  TrainingPrivateStep(const config::Config& config, StepParts parts, comm::Communicator& world,
                      std::int64_t units)
      : privacy_(agreed_privacy(config, world, units)),
        plan_section_(&privacy_->plan()),
        step_(parts, *privacy_) {
    log_privacy_plan(*privacy_, config);
  }
  StepOutcome run(std::int64_t step, double lr, const MicroBatchSource& next,
                  const std::function<void()>& before_update) override {
    return step_.run(step, lr, next, before_update);
  }
  // Poisson batches drawn with the run's key (resolved at the resume).
  data::DataLoaderOptions loader_options(data::DataLoaderOptions common) const override {
    if (privacy_->plan().poisson)
      common.poisson =
          data::PoissonSampling{privacy_->poisson_key(), privacy_->plan().sampling_rate};
    return common;
  }
  void register_state(TrainingCheckpoints& checkpoints) override {
    checkpoints.register_component(plan_section_);
    checkpoints.register_component(*privacy_);
  }
  bool skips_steps_without_targets() const override { return false; }
  // The accountant runs on rank 0 only.
  void annotate(StepRecord& record) const override {
    record.epsilon = privacy_->epsilon_after(record.step);
  }

 private:
  static std::unique_ptr<PrivateTraining> agreed_privacy(const config::Config& config,
                                                         comm::Communicator& world,
                                                         std::int64_t units) {
    std::unique_ptr<PrivateTraining> privacy;
    comm::run_on_all(world,
                     [&] { privacy = std::make_unique<PrivateTraining>(config, units, world); });
    return privacy;
  }

  std::unique_ptr<PrivateTraining> privacy_;
  PrivacyPlanSection plan_section_;
  PrivateStepRunner step_;
};

}  // namespace

std::unique_ptr<StepRunner> make_training_step_runner(const config::Config& config,
                                                      const plan::RunPlan& plan, StepParts parts,
                                                      comm::Communicator& world,
                                                      std::int64_t privacy_units) {
  if (plan.per_example)
    return std::make_unique<TrainingPrivateStep>(config, parts, world, privacy_units);
  return std::make_unique<TrainingOrdinaryStep>(parts, config.training.grad_clip);
}

}  // namespace nss::train
