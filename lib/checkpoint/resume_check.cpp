#include "checkpoint/resume_check.h"

#include "config/config.h"
#include "config/section_json.h"
#include "core/error.h"

namespace nss::checkpoint {
namespace {

using nlohmann::json;

// What a resume compares of the model: the shape, not how it was obtained
// (preset, directory) nor the longest sequence it may see. A key the
// checkpoint was written without (a step from before it existed, such as
// model.family) holds the schema's default, which is what that run computed.
json model_shape(const json& model) {
  json shape = model;
  if (shape.is_object()) {
    static const json defaults = config::section_json(config::ModelConfig{});
    for (const auto& [key, value] : defaults.items())
      if (!shape.contains(key)) shape[key] = value;
  }
  for (const char* key : {"preset", "from_pretrained", "max_position_embeddings"}) shape.erase(key);
  return shape;
}

// The adapter settings PEFT's LoraConfig holds (dropout is a training choice)
// and how the base was stored (QLoRA); a checkpoint from before the
// quantisation keys had an unquantised base.
json adapter_settings(const json& lora) {
  json settings = lora;
  settings.erase("dropout");
  if (settings.is_object()) {
    if (!settings.contains("quantize_base")) settings["quantize_base"] = "none";
    if (!settings.contains("double_quant")) settings["double_quant"] = false;
  }
  return settings;
}

// A LoRA base is the same when its files (or its random seed) are: the
// directory may have moved.
json base_files(const json& identity) {
  if (!identity.is_object()) return identity;
  return {{"files", identity.value("files", json())},
          {"initialisation_seed", identity.value("initialisation_seed", json())}};
}

const std::vector<ResumeField>& fields() {
  static const std::vector<ResumeField> list = {
      {"model", true, [](const TrainingState& s) { return model_shape(s.model); },
       "the checkpoint holds another model shape"},
      {"training.lora", true, [](const TrainingState& s) { return adapter_settings(s.lora); },
       "the checkpoint holds other adapters or another base quantisation"},
      {"lora_base", true, [](const TrainingState& s) { return base_files(s.lora_base); },
       "the LoRA checkpoint was trained on base model files other than this run's"},
      {"data", false,
       [](const TrainingState& s) {
         return json{{"seed", s.data.seed},
                     {"path", s.data.path},
                     {"seq_len", s.data.seq_len},
                     {"global_batch_size", s.data.global_batch_size}};
       },
       "training continues, but not with the samples an uninterrupted run would have seen"},
  };
  return list;
}

// "model.hidden_size: checkpoint 64, this run 128; ..." for objects, else the two values.
std::string difference(const std::string& name, const json& saved, const json& current) {
  if (!saved.is_object() || !current.is_object())
    return name + ": checkpoint " + saved.dump() + ", this run " + current.dump();
  std::string text;
  json keys = saved;
  keys.update(current);
  for (const auto& [key, unused] : keys.items()) {
    (void)unused;
    const json a = saved.value(key, json()), b = current.value(key, json());
    if (a != b)
      text += (text.empty() ? "" : "; ") + name + "." + key + ": checkpoint " + a.dump() +
              ", this run " + b.dump();
  }
  return text;
}

}  // namespace

const std::vector<ResumeField>& resume_fields() {
  return fields();
}

std::vector<std::string> check_resume(const TrainingState& saved, const TrainingState& current,
                                      const std::string& step_dir,
                                      const std::vector<SectionComparison>& sections) {
  std::string refused;
  std::vector<std::string> reported;
  const auto compare = [&](const std::string& name, bool required, const json& was, const json& is,
                           const char* why) {
    if (was == is) return;
    const std::string line = std::string(why) + ": " + difference(name, was, is);
    if (required)
      refused += "\n  " + line;
    else
      reported.push_back(line);
  };
  for (const ResumeField& field : resume_fields())
    compare(field.name, field.required, field.value(saved), field.value(current), field.why);
  for (const SectionComparison& section : sections)
    compare(section.name, true, section.saved, section.current, section.why);
  if (!refused.empty())
    throw CheckpointError(
        "checkpoint", step_dir + " does not belong to this run's configuration:" + refused,
        "resume with the configuration it was saved with (metadata.json state.config; a LoRA "
        "run needs the same model.from_pretrained files), or start fresh in another "
        "checkpoint.dir (checkpoint.resume: never there); the steps themselves are intact");
  return reported;
}

}  // namespace nss::checkpoint
