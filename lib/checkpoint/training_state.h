// The training state a checkpoint carries beside its tensors (metadata.json
// "state", docs/checkpoints.md): where training stands and what it ran with.
// One type, written by to_json and read two ways: from_json, a resume's
// reader, for which a field that is missing or of the wrong type is a
// CheckpointError (exit 5) naming it; and read_stored_state, the tools'
// reader, which takes what any committed step holds (older steps, partial
// ones a test writer made). The stateful components' public sections
// (stateful_component.h) sit beside these fields in "state". Plain C++: the
// torch-free tools read it.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "data/sample_plan.h"

namespace nss::checkpoint {

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

void to_json(nlohmann::json& out, const TrainingState& state);
/// Throws CheckpointError naming the first field that is missing or mistyped.
void from_json(const nlohmann::json& in, TrainingState& state);

/// What a tool read of a step's state: each field present with its type;
/// the others keep their defaults.
struct StoredTrainingState {
  TrainingState state;
  std::set<std::string> present;   // the fields read, by path ("config", "data.seq_len")
  std::set<std::string> mistyped;  // present with another type: left at their defaults
};

/// The tools' reader: never throws, whatever the step holds.
StoredTrainingState read_stored_state(const nlohmann::json& state);

/// The directory state.lora_base names: the pretrained base the run started
/// from (empty for a random base); nullopt when none is recorded.
std::optional<std::string> lora_base_path(const TrainingState& state);

}  // namespace nss::checkpoint
