// What consolidation needs to know about the model a checkpoint holds, read
// from metadata.json "state" by the tools' reader (read_stored_state, so any
// committed step reads):
//   state.config          the resolved configuration, as YAML text (config.resolved.yaml)
//   state.lora_base.path  the pretrained directory (else config model.from_pretrained):
//                         the LoRA base, and where an hf export's tokenizer files come from
//   state.dataset         the training data's tokenizer and preparation
//                         (data::describe_preparation)
//   state.privacy         a private run's plan (the section privacy::kPlanSection)
// and from the tensor names: LoRA adapters are "<module>.lora_A.weight" ([r, in])
// and "<module>.lora_B.weight" ([out, r]), <module> being the Hugging Face
// module of the base weight "<module>.weight".
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "checkpoint/index.h"
#include "config/config.h"

namespace nss::checkpoint {

inline constexpr const char* kLoraASuffix = ".lora_A.weight";
inline constexpr const char* kLoraBSuffix = ".lora_B.weight";

struct TrainedModel {
  std::optional<config::Config> config;  // from state.config, when present
  bool lora = false;                     // the checkpoint holds LoRA adapters
  std::string base_path;                 // the pretrained directory the run started from
  nlohmann::json dataset;                // state.dataset; null when absent
  nlohmann::json privacy;                // state.privacy of a private run; null otherwise
  std::int64_t step = 0;                 // the step the weights are from
};

/// Reads the state of `index`; throws CheckpointError when state.config is present but invalid.
TrainedModel trained_model(const CheckpointIndex& index, const std::string& origin);

/// A private run's plan (privacy::PrivacyPlan::settings()) as the step holds
/// it; null when the run was not private.
nlohmann::json privacy_settings(const CheckpointIndex& index);

/// The training data's record (state.dataset) as the step holds it; null
/// when absent.
nlohmann::json training_dataset(const CheckpointIndex& index);

/// True for "<module>.lora_A.weight" and "<module>.lora_B.weight".
bool is_lora_tensor(const std::string& name);

}  // namespace nss::checkpoint
