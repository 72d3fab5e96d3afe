#include "checkpoint/trained_model.h"

#include "checkpoint/layout.h"
#include "checkpoint/stateful_component.h"
#include "checkpoint/training_state.h"
#include "config/load.h"
#include "core/error.h"
#include "layout/sharded_state_layout.h"
#include "privacy/privacy_plan.h"

namespace nss::checkpoint {
namespace {

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

bool is_lora_tensor(const std::string& name) {
  return ends_with(name, kLoraASuffix) || ends_with(name, kLoraBSuffix);
}

nlohmann::json privacy_settings(const CheckpointIndex& index) {
  nlohmann::json settings = find_section(index.state, privacy::kPlanSection);
  return settings.is_object() ? settings : nlohmann::json();
}

nlohmann::json training_dataset(const CheckpointIndex& index) {
  const StoredTrainingState stored = read_stored_state(index.state);
  return stored.state.dataset.is_object() ? stored.state.dataset : nlohmann::json();
}

TrainedModel trained_model(const CheckpointIndex& index, const std::string& origin) {
  TrainedModel model;
  for (const auto& [name, tensor] : index.tensors)
    if (!layout::is_optimizer_state(name) && is_lora_tensor(name)) model.lora = true;
  const StoredTrainingState stored = read_stored_state(index.state);
  if (stored.mistyped.count("config"))
    throw CheckpointError("consolidate", origin + ": state.config is not YAML text",
                          "the checkpoint was not written by nss_hpc's trainer");
  if (stored.present.count("config")) {
    try {
      model.config = config::parse_config_text(stored.state.config, origin + " state.config");
    } catch (const Error& e) {
      throw CheckpointError("consolidate", e.message(),
                            "the stored configuration does not parse with this nss_hpc version");
    }
    model.base_path = model.config->model.from_pretrained;
  }
  if (const auto base_path = lora_base_path(stored.state)) model.base_path = *base_path;
  if (stored.state.dataset.is_object()) model.dataset = stored.state.dataset;
  model.privacy = privacy_settings(index);
  model.step = index.step;
  return model;
}

}  // namespace nss::checkpoint
