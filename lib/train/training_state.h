// The training state a checkpoint carries beside its tensors (metadata.json
// "state", docs/checkpoints.md): where training stands, what it ran with, and
// what a resume must agree on. One type: to_json writes it, from_json reads it
// back, and a field that is missing or of the wrong type is a
// CheckpointError (exit 5) naming it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "data/sample_plan.h"

namespace nss::train {

/// Where training stands after a completed step: what a resume continues from.
struct TrainingProgress {
  std::int64_t step = 0;  // last completed optimizer step (0: none)
  std::int64_t tokens_seen = 0;
  data::LoaderPosition data;  // the global batch the next step starts with
  std::int64_t applied_updates = 0;
  std::int64_t skipped_steps = 0;
};

struct TrainingState {
  /// 1: before the version field (model and LoRA settings are read from the
  /// stored configuration); 2: with them.
  static constexpr int kVersion = 2;

  int version = kVersion;
  TrainingProgress progress;
  struct Data {  // how the samples are drawn
    std::int64_t seed = 0;
    std::string path;
    std::int64_t seq_len = 0;
    std::int64_t global_batch_size = 0;
  } data;
  struct Schedule {
    std::string kind;
    double lr = 0, min_lr = 0;
    std::int64_t warmup_steps = 0, max_steps = 0;
  } scheduler;
  nlohmann::json model;      // the model section of the configuration (shape)
  nlohmann::json lora;       // training.lora
  nlohmann::json lora_base;  // identity of the frozen base under LoRA (null otherwise)
  nlohmann::json dataset;    // data.path's tokenizer and preparation (null: not recorded)
  nlohmann::json privacy;    // privacy::PrivacyPlan::settings() of a private run, else null
  struct Run {               // which run saved the step (empty id: saved before runs had ids)
    std::string id, output_dir;
  } run;
  int world_size = 0;
  std::string config;  // the resolved configuration (YAML)
  std::string config_sha256;
  struct Versions {
    std::string nss_hpc, git_revision, libtorch;
  } versions;
};

/// What a run records beside its configuration: the LoRA base
/// (lora_base_identity), its dataset (data::describe_preparation) and its
/// identity.
struct RunInputs {
  nlohmann::json lora_base;
  nlohmann::json dataset;
  TrainingState::Run run;  // train/run_identity.h and run.output_dir
  nlohmann::json privacy;  // privacy::PrivacyPlan::settings(), null when privacy is off
};

/// This run's state at `progress`.
TrainingState current_training_state(const config::Config& config, const TrainingProgress& progress,
                                     int world_size, const RunInputs& inputs);

/// The frozen base a LoRA run trains against: its config.json, index and
/// safetensors files with their SHA-256, or the seed of a random base.
nlohmann::json lora_base_identity(const config::Config& config);

void to_json(nlohmann::json& out, const TrainingState& state);
/// Throws CheckpointError naming the first field that is missing or mistyped.
void from_json(const nlohmann::json& in, TrainingState& state);

/// One field a resume compares: `required` ones end the resume when they
/// differ (exit 5), the others are reported and training goes on. Later
/// features append theirs.
struct ResumeField {
  const char* name;
  bool required;
  nlohmann::json (*value)(const TrainingState& state);
  const char* why;  // what a difference means
};
const std::vector<ResumeField>& resume_fields();

/// Compares the state saved in `step_dir` with this run's. Throws
/// CheckpointError naming every required field that differs, what differs and
/// how to start fresh; returns one line per other field that differs.
std::vector<std::string> check_resume(const TrainingState& saved, const TrainingState& current,
                                      const std::string& step_dir);

}  // namespace nss::train
