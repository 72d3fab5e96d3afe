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
#include "data/sample_plan.h"
#include "train/host_mirror.h"
#include "train/training_step.h"

namespace nss::checkpoint {
class AsyncCheckpointer;
struct AsyncSaveOutcome;
}  // namespace nss::checkpoint

namespace nss::train {

class MetricsLog;

/// Where training stands after a completed step: what a checkpoint restores.
struct TrainingProgress {
  std::int64_t step = 0;  // last completed optimizer step (0: none)
  std::int64_t tokens_seen = 0;
  data::LoaderPosition data;  // the global batch the next step starts with
  std::int64_t applied_updates = 0;
  std::int64_t skipped_steps = 0;
};

class TrainingCheckpoints {
 public:
  TrainingCheckpoints(const config::Config& config, comm::Communicator& comm, ShardedLlama& model,
                      OptimizerState& state);
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
  nlohmann::json state_of(const TrainingProgress& progress) const;
  void report(std::int64_t step, const nlohmann::json& event, MetricsLog* metrics);
  void handle_failure(std::int64_t step, ExitCode code, const std::string& error);
  void settle(const checkpoint::AsyncSaveOutcome& outcome, MetricsLog* metrics);

  const config::Config& config_;
  comm::Communicator& comm_;
  OptimizerState& state_;
  std::vector<checkpoint::TensorSpec> tensors_;
  std::unique_ptr<HostMirror> mirror_;  // host memory of the saved shards
  std::vector<checkpoint::ShardBuffer> buffers_;
  nlohmann::json lora_base_;  // identity of the frozen base under LoRA
  std::unique_ptr<checkpoint::AsyncCheckpointer> async_;
  std::int64_t last_saved_step_ = 0;
};

}  // namespace nss::train
