// The trainer's step runner, chosen once by the run plan: the ordinary step,
// or DP-SGD's (plan::RunPlan::per_example) with the run's privacy — its plan
// over the training data and its key, each saved as a checkpoint component,
// its Poisson batches and the epsilon it reports. Every run registers the
// privacy plan's section, so that a resume cannot switch privacy on or off.
#pragma once

#include <cstdint>
#include <memory>

#include "comm/communicator.h"
#include "config/config.h"
#include "plan/run_plan.h"
#include "train/step_runner.h"

namespace nss::train {

/// The runner of `config`'s steps under `plan`. A private run's plan is made
/// over the training data's `privacy_units` on every rank (one message and
/// exit code for all, collective over `world`) and logged once.
std::unique_ptr<StepRunner> make_training_step_runner(const config::Config& config,
                                                      const plan::RunPlan& plan, StepParts parts,
                                                      comm::Communicator& world,
                                                      std::int64_t privacy_units);

}  // namespace nss::train
