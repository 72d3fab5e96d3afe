// This run's training state (checkpoint/training_state.h) at a step: what
// every save records and what a resume compares a step's state with.
#pragma once

#include <nlohmann/json.hpp>

#include "checkpoint/training_state.h"
#include "config/config.h"

namespace nss::train {

/// What a run records beside its configuration: the LoRA base
/// (lora_base_identity), its dataset (data::describe_preparation) and its
/// identity.
struct RunInputs {
  nlohmann::json lora_base;
  nlohmann::json dataset;
  checkpoint::TrainingState::Run run;  // train/run_identity.h and run.output_dir
};

/// This run's state at `progress`.
checkpoint::TrainingState current_training_state(const config::Config& config,
                                                 const checkpoint::TrainingProgress& progress,
                                                 int world_size, const RunInputs& inputs);

/// The frozen base a LoRA run trains against: its config.json, index and
/// safetensors files with their SHA-256, or the seed of a random base.
nlohmann::json lora_base_identity(const config::Config& config);

}  // namespace nss::train
