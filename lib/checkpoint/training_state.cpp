#include "checkpoint/training_state.h"

#include "checkpoint/damage.h"
#include "config/load.h"
#include "config/section_json.h"
#include "core/error.h"

namespace nss::checkpoint {
namespace {

using nlohmann::json;

// How a field's absence or type is reported: by its path in metadata.json.
[[noreturn]] void bad_field(const std::string& path, const std::string& problem) {
  throw CheckpointDamage("checkpoint", "the training state " + problem + ": " + path,
                         "the step was not written by this nss_hpc or its metadata.json was "
                         "edited; point checkpoint.resume at another step, or start fresh in "
                         "another checkpoint.dir");
}

// One reading of the state's fields: a resume's refuses a field that is
// missing or of another type; a tool's (`notes`) leaves its default and
// notes it, since older steps and test writers leave fields out.
class Fields {
 public:
  explicit Fields(StoredTrainingState* notes) : notes_(notes) {}

  bool strict() const { return notes_ == nullptr; }

  template <class T>
  void read(const json& object, const std::string& key, const std::string& path, T& out) const {
    const json* value = find(object, key, path);
    if (!value) return;
    try {
      out = value->get<T>();
    } catch (const json::exception&) {
      if (strict()) bad_field(path, "has a field of the wrong type (" + value->dump() + ")");
      notes_->mistyped.insert(path);
      return;
    }
    if (notes_) notes_->present.insert(path);
  }

  // The object at `key`; null when a tool's reading finds none.
  json object(const json& object, const std::string& key, const std::string& path) const {
    const json* value = find(object, key, path);
    if (!value) return json();
    if (!value->is_object()) {
      if (strict()) bad_field(path, "has a field that is not an object");
      notes_->mistyped.insert(path);
      return json();
    }
    if (notes_) notes_->present.insert(path);
    return *value;
  }

 private:
  const json* find(const json& object, const std::string& key, const std::string& path) const {
    if (object.is_object() && object.contains(key)) return &object.at(key);
    if (strict()) bad_field(path, "lacks the field");
    return nullptr;
  }

  StoredTrainingState* notes_;
};

// Version 1 stored the model and LoRA settings only inside the resolved configuration.
void read_settings_from_config(TrainingState& s) {
  try {
    const config::Config saved =
        config::parse_config_text(s.config, "the checkpoint's configuration");
    s.model = config::section_json(saved.model);
    s.lora = config::section_json(saved.training.lora);
  } catch (const Error& e) {
    bad_field("config", "has a configuration this nss_hpc cannot read (" + e.message() + ")");
  }
}

void read_progress(const json& in, const Fields& f, TrainingState& s) {
  TrainingProgress& p = s.progress;
  f.read(in, "step", "step", p.step);
  f.read(in, "tokens_seen", "tokens_seen", p.tokens_seen);
  const json data = f.object(in, "data", "data");
  f.read(data, "epoch", "data.epoch", p.data.epoch);
  f.read(data, "cursor", "data.cursor", p.data.cursor);
  f.read(data, "seed", "data.seed", s.data.seed);
  f.read(data, "path", "data.path", s.data.path);
  f.read(data, "seq_len", "data.seq_len", s.data.seq_len);
  f.read(data, "global_batch_size", "data.global_batch_size", s.data.global_batch_size);
  const json scheduler = f.object(in, "scheduler", "scheduler");
  f.read(scheduler, "kind", "scheduler.kind", s.scheduler.kind);
  f.read(scheduler, "lr", "scheduler.lr", s.scheduler.lr);
  f.read(scheduler, "min_lr", "scheduler.min_lr", s.scheduler.min_lr);
  f.read(scheduler, "warmup_steps", "scheduler.warmup_steps", s.scheduler.warmup_steps);
  f.read(scheduler, "max_steps", "scheduler.max_steps", s.scheduler.max_steps);
  const json optimizer = f.object(in, "optimizer", "optimizer");
  f.read(optimizer, "applied_updates", "optimizer.applied_updates", p.applied_updates);
  f.read(optimizer, "skipped_steps", "optimizer.skipped_steps", p.skipped_steps);
}

void read_state(const json& in, const Fields& f, TrainingState& s) {
  if (!in.is_object()) {
    if (f.strict()) bad_field("state", "is not an object");
    return;
  }
  s.version = 1;
  if (in.contains("version")) f.read(in, "version", "version", s.version);
  if (f.strict() && (s.version < 1 || s.version > TrainingState::kVersion))
    bad_field("version",
              "has a version this nss_hpc does not know (" + std::to_string(s.version) + ")");
  read_progress(in, f, s);
  f.read(in, "world_size", "world_size", s.world_size);
  f.read(in, "config", "config", s.config);
  f.read(in, "config_sha256", "config_sha256", s.config_sha256);
  const json versions = f.object(in, "versions", "versions");
  f.read(versions, "nss_hpc", "versions.nss_hpc", s.versions.nss_hpc);
  f.read(versions, "git_revision", "versions.git_revision", s.versions.git_revision);
  f.read(versions, "libtorch", "versions.libtorch", s.versions.libtorch);
  s.lora_base = in.value("lora_base", json());
  s.dataset = in.value("dataset", json());
  if (in.contains("run")) {
    const json run = f.object(in, "run", "run");
    f.read(run, "id", "run.id", s.run.id);
    f.read(run, "output_dir", "run.output_dir", s.run.output_dir);
  }
  if (s.version >= 2 || !f.strict()) {
    s.model = f.object(in, "model", "model");
    s.lora = f.object(in, "lora", "lora");
    return;
  }
  read_settings_from_config(s);
}

}  // namespace

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
  if (!s.run.id.empty()) out["run"] = {{"id", s.run.id}, {"output_dir", s.run.output_dir}};
}

void from_json(const json& in, TrainingState& s) {
  read_state(in, Fields(nullptr), s);
}

StoredTrainingState read_stored_state(const json& state) {
  StoredTrainingState stored;
  read_state(state, Fields(&stored), stored.state);
  return stored;
}

std::optional<std::string> lora_base_path(const TrainingState& state) {
  const json& base = state.lora_base;
  if (base.is_object() && base.contains("path") && base["path"].is_string())
    return base["path"].get<std::string>();
  return std::nullopt;
}

}  // namespace nss::checkpoint
