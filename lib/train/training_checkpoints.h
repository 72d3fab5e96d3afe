// The trainer's side of checkpoints: which tensors and buffers a rank saves
// (its master shards and AdamW moments, by Hugging Face name), the training
// state and the registered components' sections that go with them, resume
// (any world size, with fallback), periodic and final saves (synchronous or
// asynchronous), and the metrics events.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "checkpoint/component_registry.h"
#include "checkpoint/layout.h"
#include "checkpoint/load.h"
#include "checkpoint/stateful_component.h"
#include "checkpoint/training_state.h"
#include "comm/communicator.h"
#include "config/config.h"
#include "core/error.h"
#include "train/current_training_state.h"
#include "train/sharded_state.h"

namespace nss::checkpoint {
class AsyncCheckpointer;
struct AsyncSaveOutcome;
}  // namespace nss::checkpoint

namespace nss::train {

class MetricsLog;

/// Why a step is saved: a periodic save may fail and training go on; a
/// final or stop save that fails ends the run with exit 5.
enum class SaveKind { kPeriodic, kFinal, kStop };

class TrainingCheckpoints {
 public:
  /// `writer_comm`: the asynchronous writer's own communicator over the same
  /// ranks (checkpoint.async; nullptr otherwise). `dataset`: the training
  /// data's tokenizer and preparation (data::describe_preparation), recorded
  /// in every step's state.
  /// `run_id`: this run's identity (train/run_identity.h), recorded in every step.
  TrainingCheckpoints(const config::Config& config, comm::Communicator& comm, ShardedState& state,
                      std::unique_ptr<comm::Communicator> writer_comm, nlohmann::json dataset,
                      std::string run_id);
  ~TrainingCheckpoints();
  TrainingCheckpoints(const TrainingCheckpoints&) = delete;
  TrainingCheckpoints& operator=(const TrainingCheckpoints&) = delete;

  /// Adds `component` (borrowed: it outlives this) to every save, and to the
  /// resume, which compares the sections it must match and then hands it its
  /// section. Register every component before resume().
  void register_component(checkpoint::StatefulComponent& component);

  /// checkpoint.resume: loads a committed step into the shards (and moments,
  /// unless checkpoint.load_optimizer is false) and returns its progress, or
  /// nullopt for a fresh start. Newer steps of checkpoint.dir that every rank
  /// found damaged are set aside (checkpoint::step_corrupt_path) and `latest` names
  /// the step loaded. Exit 5 (an AgreedError) when checkpoints exist but none
  /// loads, when one belongs to another configuration, or, under
  /// checkpoint.resume: auto, to another run; and when a fresh start
  /// (checkpoint.resume: never) finds committed steps in checkpoint.dir.
  /// Every registered component then loads its section of the step (nothing
  /// on a fresh start).
  std::optional<checkpoint::TrainingProgress> resume();

  /// True when `step` is a periodic save point (checkpoint.interval_steps).
  bool due(std::int64_t step) const;

  /// Saves `progress`. A periodic save is asynchronous with checkpoint.async;
  /// when it fails, training goes on unless checkpoint.fail_on_error. The
  /// final save and the save on a stop signal are synchronous and are the
  /// work the run promises: when they fail, every rank throws the same
  /// comm::AgreedError (exit 5), whatever checkpoint.fail_on_error says.
  void save(const checkpoint::TrainingProgress& progress, SaveKind kind, MetricsLog* metrics);

  /// Call before every optimizer update: an asynchronous save may still be
  /// copying the shards it snapshots.
  void before_update();

  /// Collects the outcome of a finished asynchronous save (collective, cheap).
  void poll(MetricsLog* metrics);

  /// Waits for an asynchronous save in flight and reports its outcome.
  void drain(MetricsLog* metrics);

  /// The last step this run committed or resumed from (0: none).
  std::int64_t last_saved_step() const { return last_saved_step_; }

 private:
  void report(std::int64_t step, const nlohmann::json& event, MetricsLog* metrics);
  void handle_failure(std::int64_t step, SaveKind kind, ExitCode code, const std::string& error);
  void settle(const checkpoint::AsyncSaveOutcome& outcome, MetricsLog* metrics);
  std::optional<checkpoint::Refusal> refusal(const nlohmann::json& saved,
                                             const std::string& step_dir) const;
  bool resumes_own_directory() const;
  void check_directory_owner() const;
  void set_aside_damaged(const std::vector<std::int64_t>& damaged, std::int64_t loaded);

  const config::Config& config_;
  comm::Communicator& comm_;
  ShardedState& state_;
  RunInputs inputs_;
  checkpoint::ComponentRegistry components_;
  std::unique_ptr<checkpoint::AsyncCheckpointer> async_;
  std::int64_t last_saved_step_ = 0;
};

}  // namespace nss::train
