#include "train/step_runner.h"

#include <utility>

namespace nss::train {
namespace {

// Micro-batch `micro` of a step whose first one was read to learn the count.
std::function<MicroBatchTensors(std::int64_t)> after_first(MicroBatchTensors& first,
                                                           const MicroBatchSource& next) {
  return [&first, &next](std::int64_t micro) { return micro == 0 ? std::move(first) : next(); };
}

}  // namespace

optim::AdamW adamw_of(const config::TrainingConfig& training) {
  return optim::AdamW({training.beta1, training.beta2, training.eps, training.weight_decay});
}

StepOutcome OrdinaryStepRunner::run(std::int64_t step, double lr, const MicroBatchSource& next,
                                    const std::function<void()>& before_update) {
  MicroBatchTensors first = next();
  const StepSettings settings{step, first.micro_steps, lr, grad_clip_, before_update};
  return run_training_step(parts_.model, parts_.state, parts_.adamw, settings,
                           after_first(first, next), parts_.comms);
}

StepOutcome PrivateStepRunner::run(std::int64_t step, double lr, const MicroBatchSource& next,
                                   const std::function<void()>& before_update) {
  MicroBatchTensors first = next();
  return run_private_step(parts_.model, parts_.state, parts_.adamw,
                          source_.step_settings(step, first.micro_steps, lr, before_update),
                          after_first(first, next), parts_.comms);
}

}  // namespace nss::train
