#include "train/training_state.h"

#include <filesystem>

#include <torch/version.h>

#include "checkpoint/damage.h"
#include "config/load.h"
#include "config/section_json.h"
#include "core/build_info.h"
#include "core/error.h"
#include "core/sha256.h"

namespace nss::train {
namespace {

using nlohmann::json;

// How a field's absence or type is reported: by its path in metadata.json.
[[noreturn]] void bad_field(const std::string& path, const std::string& problem) {
  throw checkpoint::CheckpointDamage(
      "checkpoint", "the training state " + problem + ": " + path,
      "the step was not written by this nss_hpc or its metadata.json was "
      "edited; point checkpoint.resume at another step, or start fresh in "
      "another checkpoint.dir");
}

const json& at(const json& object, const std::string& key, const std::string& path) {
  if (!object.is_object() || !object.contains(key)) bad_field(path, "lacks the field");
  return object.at(key);
}

template <class T>
T read(const json& object, const std::string& key, const std::string& path) {
  const json& value = at(object, key, path);
  try {
    return value.get<T>();
  } catch (const json::exception&) {
    bad_field(path, "has a field of the wrong type (" + value.dump() + ")");
  }
}

json read_object(const json& object, const std::string& key, const std::string& path) {
  const json& value = at(object, key, path);
  if (!value.is_object()) bad_field(path, "has a field that is not an object");
  return value;
}

// What a resume compares of the model: the shape, not how it was obtained
// (preset, directory) nor the longest sequence it may see.
json model_shape(const json& model) {
  json shape = model;
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
      // The guarantee covers one mechanism: q, sigma, C and delta fixed from the first step.
      {"privacy", true, [](const TrainingState& s) { return s.privacy; },
       "the checkpoint was trained with other privacy settings (or with privacy off/on; a "
       "calibrated noise_multiplier follows training.max_steps and privacy.target_epsilon)"},
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

TrainingState current_training_state(const config::Config& config, const TrainingProgress& progress,
                                     int world_size, const RunInputs& inputs) {
  const auto& t = config.training;
  TrainingState state;
  state.progress = progress;
  state.data = {config.run.seed, config.data.path, config.data.seq_len, t.global_batch_size};
  state.scheduler = {config::choice_name(t.lr_schedule), t.lr, t.min_lr, t.warmup_steps,
                     t.max_steps};
  state.model = config::section_json(config.model);
  state.lora = config::section_json(t.lora);
  state.lora_base = inputs.lora_base;
  state.dataset = inputs.dataset;
  state.privacy = inputs.privacy;
  state.run = inputs.run;
  state.world_size = world_size;
  state.config = config::to_yaml(config, /*with_comments=*/false);
  state.config_sha256 = sha256_hex(state.config);
  state.versions = {build_version(), build_git_revision(), TORCH_VERSION};
  return state;
}

void to_json(json& out, const TrainingState& s) {
  const TrainingProgress& p = s.progress;
  out = {
      {"version", s.version},
      {"step", p.step},
      {"tokens_seen", p.tokens_seen},
      {"data",
       {{"epoch", p.data.epoch},
        {"cursor", p.data.cursor},
        {"seed", s.data.seed},
        {"path", s.data.path},
        {"seq_len", s.data.seq_len},
        {"global_batch_size", s.data.global_batch_size}}},
      // Every random choice is a counter-based function of (seed, step, sample, layer).
      {"rng", {{"kind", "counter-based"}, {"seed", s.data.seed}}},
      {"scheduler",
       {{"kind", s.scheduler.kind},
        {"lr", s.scheduler.lr},
        {"min_lr", s.scheduler.min_lr},
        {"warmup_steps", s.scheduler.warmup_steps},
        {"max_steps", s.scheduler.max_steps}}},
      {"optimizer", {{"applied_updates", p.applied_updates}, {"skipped_steps", p.skipped_steps}}},
      {"model", s.model},
      {"lora", s.lora},
      {"world_size", s.world_size},
      {"config", s.config},
      {"config_sha256", s.config_sha256},
      {"versions",
       {{"nss_hpc", s.versions.nss_hpc},
        {"git_revision", s.versions.git_revision},
        {"libtorch", s.versions.libtorch}}},
  };
  if (!s.lora_base.is_null()) out["lora_base"] = s.lora_base;
  if (!s.dataset.is_null()) out["dataset"] = s.dataset;
  if (!s.privacy.is_null()) out["privacy"] = s.privacy;
  if (!s.run.id.empty()) out["run"] = {{"id", s.run.id}, {"output_dir", s.run.output_dir}};
}

void from_json(const json& in, TrainingState& s) {
  if (!in.is_object()) bad_field("state", "is not an object");
  s.version = in.contains("version") ? read<int>(in, "version", "version") : 1;
  if (s.version < 1 || s.version > TrainingState::kVersion)
    bad_field("version",
              "has a version this nss_hpc does not know (" + std::to_string(s.version) + ")");
  TrainingProgress& p = s.progress;
  p.step = read<std::int64_t>(in, "step", "step");
  p.tokens_seen = read<std::int64_t>(in, "tokens_seen", "tokens_seen");
  const json data = read_object(in, "data", "data");
  p.data = {read<std::int64_t>(data, "epoch", "data.epoch"),
            read<std::int64_t>(data, "cursor", "data.cursor")};
  s.data = {read<std::int64_t>(data, "seed", "data.seed"),
            read<std::string>(data, "path", "data.path"),
            read<std::int64_t>(data, "seq_len", "data.seq_len"),
            read<std::int64_t>(data, "global_batch_size", "data.global_batch_size")};
  const json scheduler = read_object(in, "scheduler", "scheduler");
  s.scheduler = {read<std::string>(scheduler, "kind", "scheduler.kind"),
                 read<double>(scheduler, "lr", "scheduler.lr"),
                 read<double>(scheduler, "min_lr", "scheduler.min_lr"),
                 read<std::int64_t>(scheduler, "warmup_steps", "scheduler.warmup_steps"),
                 read<std::int64_t>(scheduler, "max_steps", "scheduler.max_steps")};
  const json optimizer = read_object(in, "optimizer", "optimizer");
  p.applied_updates = read<std::int64_t>(optimizer, "applied_updates", "optimizer.applied_updates");
  p.skipped_steps = read<std::int64_t>(optimizer, "skipped_steps", "optimizer.skipped_steps");
  s.world_size = read<int>(in, "world_size", "world_size");
  s.config = read<std::string>(in, "config", "config");
  s.config_sha256 = read<std::string>(in, "config_sha256", "config_sha256");
  const json versions = read_object(in, "versions", "versions");
  s.versions = {read<std::string>(versions, "nss_hpc", "versions.nss_hpc"),
                read<std::string>(versions, "git_revision", "versions.git_revision"),
                read<std::string>(versions, "libtorch", "versions.libtorch")};
  s.lora_base = in.value("lora_base", json());
  s.dataset = in.value("dataset", json());
  s.privacy = in.value("privacy", json());
  if (in.contains("run")) {
    const json run = read_object(in, "run", "run");
    s.run = {read<std::string>(run, "id", "run.id"),
             read<std::string>(run, "output_dir", "run.output_dir")};
  }
  if (s.version >= 2) {
    s.model = read_object(in, "model", "model");
    s.lora = read_object(in, "lora", "lora");
    return;
  }
  // Version 1 stored the settings only inside the resolved configuration.
  try {
    const config::Config saved =
        config::parse_config_text(s.config, "the checkpoint's configuration");
    s.model = config::section_json(saved.model);
    s.lora = config::section_json(saved.training.lora);
  } catch (const Error& e) {
    bad_field("config", "has a configuration this nss_hpc cannot read (" + e.message() + ")");
  }
}

const std::vector<ResumeField>& resume_fields() {
  return fields();
}

std::vector<std::string> check_resume(const TrainingState& saved, const TrainingState& current,
                                      const std::string& step_dir) {
  std::string refused;
  std::vector<std::string> reported;
  for (const ResumeField& field : resume_fields()) {
    const json was = field.value(saved), is = field.value(current);
    if (was == is) continue;
    const std::string line = std::string(field.why) + ": " + difference(field.name, was, is);
    if (field.required)
      refused += "\n  " + line;
    else
      reported.push_back(line);
  }
  if (!refused.empty())
    throw CheckpointError(
        "checkpoint", step_dir + " does not belong to this run's configuration:" + refused,
        "resume with the configuration it was saved with (metadata.json state.config; a LoRA "
        "run needs the same model.from_pretrained files), or start fresh in another "
        "checkpoint.dir (checkpoint.resume: never there); the steps themselves are intact");
  return reported;
}

}  // namespace nss::train
