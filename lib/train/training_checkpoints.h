// The trainer's side of checkpoints: which tensors and buffers a rank saves
// (its master shards and AdamW moments, by Hugging Face name), the training
// state that goes with them, resume (any world size, with fallback), periodic
// and final saves (synchronous or asynchronous), and the metrics events.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "checkpoint/layout.h"
#include "comm/communicator.h"
#include "config/config.h"
#include "core/error.h"
#include "train/sharded_state.h"
#include "train/training_state.h"

namespace nss::checkpoint {
class AsyncCheckpointer;
struct AsyncSaveOutcome;
}  // namespace nss::checkpoint

namespace nss::train {

class MetricsLog;

class TrainingCheckpoints {
 public:
  /// `writer_comm`: the asynchronous writer's own communicator over the same
  /// ranks (checkpoint.async; nullptr otherwise). `dataset`: the training
  /// data's tokenizer and preparation (data::describe_preparation), recorded
  /// in every step's state.
  TrainingCheckpoints(const config::Config& config, comm::Communicator& comm, ShardedState& state,
                      std::unique_ptr<comm::Communicator> writer_comm, nlohmann::json dataset);
  ~TrainingCheckpoints();
  TrainingCheckpoints(const TrainingCheckpoints&) = delete;
  TrainingCheckpoints& operator=(const TrainingCheckpoints&) = delete;

  /// checkpoint.resume: loads a committed step into the shards (and moments,
  /// unless checkpoint.load_optimizer is false) and returns its progress, or
  /// nullopt for a fresh start. CheckpointError (exit 5) when checkpoints exist
  /// but none loads, or a LoRA checkpoint belongs to another base model.
  std::optional<TrainingProgress> resume();

  /// True when `step` is a periodic save point (checkpoint.interval_steps).
  bool due(std::int64_t step) const;

  /// Saves `progress`. Asynchronous when checkpoint.async and `synchronous`
  /// is false (the last save of a run and a save on a signal are synchronous).
  /// A failed save is logged on every rank; training goes on unless
  /// checkpoint.fail_on_error.
  void save(const TrainingProgress& progress, bool synchronous, MetricsLog* metrics);

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
  void handle_failure(std::int64_t step, ExitCode code, const std::string& error);
  void settle(const checkpoint::AsyncSaveOutcome& outcome, MetricsLog* metrics);

  const config::Config& config_;
  comm::Communicator& comm_;
  ShardedState& state_;
  RunInputs inputs_;
  std::unique_ptr<checkpoint::AsyncCheckpointer> async_;
  std::int64_t last_saved_step_ = 0;
};

}  // namespace nss::train
