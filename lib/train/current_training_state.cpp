#include "train/current_training_state.h"

#include <filesystem>

#include <torch/version.h>

#include "config/load.h"
#include "config/section_json.h"
#include "core/build_info.h"
#include "core/sha256.h"

namespace nss::train {

using nlohmann::json;

json lora_base_identity(const config::Config& config) {
  const auto& model = config.model;
  if (model.from_pretrained.empty())
    return {{"path", ""}, {"initialisation_seed", config.run.seed}};
  json files = json::object();
  for (const auto& entry : std::filesystem::directory_iterator(model.from_pretrained)) {
    const std::string name = entry.path().filename().string();
    const bool weights =
        name.size() > 12 && name.compare(name.size() - 12, 12, ".safetensors") == 0;
    if (entry.is_regular_file() &&
        (weights || name == "config.json" || name == "model.safetensors.index.json"))
      files[name] = sha256_file_hex(entry.path().string());
  }
  return {{"path", model.from_pretrained}, {"files", files}};
}

checkpoint::TrainingState current_training_state(const config::Config& config,
                                                 const checkpoint::TrainingProgress& progress,
                                                 int world_size, const RunInputs& inputs) {
  const auto& t = config.training;
  checkpoint::TrainingState state;
  state.progress = progress;
  state.data = {config.run.seed, config.data.path, config.data.seq_len, t.global_batch_size};
  state.scheduler = {config::choice_name(t.lr_schedule), t.lr, t.min_lr, t.warmup_steps,
                     t.max_steps};
  state.model = config::section_json(config.model);
  state.lora = config::section_json(t.lora);
  state.lora_base = inputs.lora_base;
  state.dataset = inputs.dataset;
  state.run = inputs.run;
  state.world_size = world_size;
  state.config = config::to_yaml(config, /*with_comments=*/false);
  state.config_sha256 = sha256_hex(state.config);
  state.versions = {build_version(), build_git_revision(), TORCH_VERSION};
  return state;
}

}  // namespace nss::train
