#include "checkpoint/trained_model.h"

#include "checkpoint/layout.h"
#include "config/load.h"
#include "core/error.h"
#include "layout/sharded_state_layout.h"

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

TrainedModel trained_model(const CheckpointIndex& index, const std::string& origin) {
  TrainedModel model;
  for (const auto& [name, tensor] : index.tensors)
    if (!layout::is_optimizer_state(name) && is_lora_tensor(name)) model.lora = true;
  const auto& state = index.state;
  if (state.contains("config")) {
    if (!state["config"].is_string())
      throw CheckpointError("consolidate", origin + ": state.config is not YAML text",
                            "the checkpoint was not written by nss_hpc's trainer");
    try {
      model.config =
          config::parse_config_text(state["config"].get<std::string>(), origin + " state.config");
    } catch (const Error& e) {
      throw CheckpointError("consolidate", e.message(),
                            "the stored configuration does not parse with this nss_hpc version");
    }
    model.base_path = model.config->model.from_pretrained;
  }
  if (state.contains("lora_base") && state["lora_base"].is_object() &&
      state["lora_base"].contains("path") && state["lora_base"]["path"].is_string())
    model.base_path = state["lora_base"]["path"].get<std::string>();
  if (state.contains("dataset") && state["dataset"].is_object()) model.dataset = state["dataset"];
  if (state.contains("privacy") && state["privacy"].is_object()) model.privacy = state["privacy"];
  model.step = index.step;
  return model;
}

}  // namespace nss::checkpoint
