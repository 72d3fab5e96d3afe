#include "train/training_checkpoints.h"

#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include "checkpoint/async_saver.h"
#include "checkpoint/commit.h"
#include "checkpoint/damage.h"
#include "checkpoint/load.h"
#include "checkpoint/resume_check.h"
#include "checkpoint/save.h"
#include "checkpoint/step_directory.h"
#include "comm/agreement.h"
#include "core/error.h"
#include "core/fs.h"
#include "core/units.h"
#include "train/metrics_log.h"

namespace nss::train {
namespace {

// The metrics.jsonl record of a committed save.
nlohmann::json checkpoint_event(const checkpoint::SaveResult& result) {
  return {{"event", "checkpoint"},
          {"step", result.step},
          {"bytes", result.bytes},
          {"seconds", result.seconds},
          {"blocking_seconds", result.blocking_seconds}};
}

// The step's training state; CheckpointError naming the step and the field
// when it cannot be read (the resume treats the step as damaged).
checkpoint::TrainingState read_training_state(const nlohmann::json& saved,
                                              const std::string& step_dir) {
  try {
    return saved.get<checkpoint::TrainingState>();
  } catch (const checkpoint::CheckpointDamage& e) {
    throw checkpoint::CheckpointDamage(e.component(), step_dir + "/metadata.json: " + e.message(),
                                       e.hint());
  }
}

}  // namespace

TrainingCheckpoints::TrainingCheckpoints(const config::Config& config, comm::Communicator& comm,
                                         ShardedState& state,
                                         std::unique_ptr<comm::Communicator> writer_comm,
                                         nlohmann::json dataset, std::string run_id)
    : config_(config), comm_(comm), state_(state) {
  state_.checkpoint_buffers();  // the host mirror, before the writer reserves its staging
  inputs_.dataset = std::move(dataset);
  inputs_.run = {std::move(run_id), config.run.output_dir};
  if (config.training.lora.enabled) {
    nlohmann::json& base = inputs_.lora_base;
    comm::run_on_root(comm, 0, [&] { base = lora_base_identity(config); });
    std::string text = base.dump();
    comm::broadcast_text(comm, text, 0);
    base = nlohmann::json::parse(text);
  }
  if (config.checkpoint.async) {
    NSS_ASSERT(writer_comm, "train", "checkpoint.async needs the writer's own communicator");
    // Host copies of device state are a snapshot already: the writer copies
    // the state itself only on CPU (docs/checkpoints.md, one host copy).
    const auto mode = state_.checkpoint_buffers_are_copies()
                          ? checkpoint::SnapshotMode::kCallerSnapshot
                          : checkpoint::SnapshotMode::kOverlapped;
    async_ = std::make_unique<checkpoint::AsyncCheckpointer>(std::move(writer_comm), mode);
    async_->reserve_staging(state_.saved_buffers());
  }
}

TrainingCheckpoints::~TrainingCheckpoints() = default;

void TrainingCheckpoints::register_component(checkpoint::StatefulComponent& component) {
  components_.add(component);
}

bool TrainingCheckpoints::resumes_own_directory() const {
  const auto& k = config_.checkpoint;
  return k.resume.automatic() || same_directory(k.resume.path(), k.dir);
}

// Why the step saved with `saved` must not be resumed by this run, if it must not.
std::optional<checkpoint::Refusal> TrainingCheckpoints::refusal(const nlohmann::json& saved,
                                                                const std::string& step_dir) const {
  const checkpoint::TrainingState state = read_training_state(saved, step_dir);
  const checkpoint::TrainingState now = current_training_state(config_, {}, comm_.size(), inputs_);
  try {
    for (const std::string& difference :
         checkpoint::check_resume(state, now, step_dir, components_.comparisons(saved)))
      spdlog::warn("[checkpoint] {}", difference);
  } catch (const CheckpointError& e) {
    return checkpoint::Refusal{e.message(), e.hint()};
  }
  if (state.run.id.empty() || state.run.id == inputs_.run.id) return std::nullopt;
  const std::string whose = step_dir + " was saved by another run (run id " + state.run.id +
                            ", run directory " + state.run.output_dir + "); this run is " +
                            inputs_.run.id + " in " + inputs_.run.output_dir;
  if (resumes_own_directory())
    return checkpoint::Refusal{
        whose + ": two runs share checkpoint.dir " + config_.checkpoint.dir,
        "give this run its own checkpoint.dir to start fresh, or set checkpoint.resume to that "
        "step directory to continue or fine-tune from it on purpose"};
  spdlog::warn("[checkpoint] {}; loading it because checkpoint.resume names it", whose);
  return std::nullopt;
}

void TrainingCheckpoints::set_aside_damaged(const std::vector<std::int64_t>& damaged,
                                            std::int64_t loaded) {
  if (damaged.empty() || !resumes_own_directory()) return;
  comm::run_on_root(comm_, 0, [&] {
    for (const std::int64_t step : damaged)
      spdlog::warn(
          "[checkpoint] set aside step {} as {}: every rank found it damaged during this resume; "
          "it is kept for inspection (nss_ckpt verify), never loaded, pruned or deleted",
          step, checkpoint::set_aside_damaged_step(config_.checkpoint.dir, step, loaded));
  });
}

// A run writes only into a checkpoint directory whose steps are its own: it
// would collide with another run's steps, prune them, or mix the two.
void TrainingCheckpoints::check_directory_owner() const {
  const auto& k = config_.checkpoint;
  if (k.resume.never()) return checkpoint::check_fresh_start(k.dir);
  const auto steps = checkpoint::committed_steps(k.dir);
  if (steps.empty()) return;
  const std::string newest = checkpoint::step_dir_path(k.dir, steps.front());
  checkpoint::TrainingState::Run owner;
  try {
    owner = read_training_state(checkpoint::read_index(newest).state, newest).run;
  } catch (const CheckpointError&) {
    return;  // damaged: the resume's fallback deals with it, step by step
  }
  if (owner.id.empty() || owner.id == inputs_.run.id) return;
  throw CheckpointError(
      "checkpoint",
      "checkpoint.dir " + k.dir + " holds the steps of another run (run id " + owner.id +
          ", run directory " + owner.output_dir + ", newest " + newest + "); this run is " +
          inputs_.run.id + " in " + inputs_.run.output_dir,
      "give this run its own checkpoint.dir to start fresh; to continue or fine-tune from "
      "that run's step, set checkpoint.resume to its step directory and keep checkpoint.dir "
      "separate");
}

std::optional<checkpoint::TrainingProgress> TrainingCheckpoints::resume() {
  const auto& k = config_.checkpoint;
  comm::run_on_root(comm_, 0, [&] { check_directory_owner(); });
  checkpoint::LoadOptions options{k.load_optimizer, k.hdf5_file_locking, {}};
  options.accept_state = [this](const nlohmann::json& saved, const std::string& step_dir) {
    return refusal(saved, step_dir);
  };
  std::optional<checkpoint::LoadResult> loaded;
  {
    torch::NoGradGuard no_grad;  // the loader writes into the masters' storage
    loaded = checkpoint::resume_checkpoint(comm_, k.dir, k.resume, state_.checkpoint_tensors(),
                                           state_.checkpoint_buffers(), options);
    if (loaded) state_.copy_from_host();
  }
  if (!loaded) {
    spdlog::info(
        "[checkpoint] no checkpoint to resume from in {} (checkpoint.resume: {}): "
        "starting at step 1",
        k.dir, k.resume.text());
    components_.load(std::nullopt);
    return std::nullopt;
  }
  // accept_state read it on rank 0: it parses the same on every rank.
  checkpoint::TrainingProgress progress =
      read_training_state(loaded->state, loaded->step_dir).progress;
  if (!k.load_optimizer) progress.applied_updates = 0;
  spdlog::info(
      "[checkpoint] resumed from {} (step {}, saved by {} ranks, now {}): read {} in "
      "{:.2f} s; {}",
      loaded->step_dir, loaded->step, loaded->saved_world_size, comm_.size(),
      format_bytes(loaded->bytes_read), loaded->seconds,
      k.load_optimizer ? "optimizer state restored"
                       : "model weights only (checkpoint.load_optimizer: false)");
  last_saved_step_ = loaded->step;
  set_aside_damaged(loaded->damaged_steps, loaded->step);
  components_.load(loaded);
  return progress;
}

bool TrainingCheckpoints::due(std::int64_t step) const {
  const std::int64_t interval = config_.checkpoint.interval_steps;
  return interval > 0 && step % interval == 0;
}

void TrainingCheckpoints::report(std::int64_t step, const nlohmann::json& event,
                                 MetricsLog* metrics) {
  last_saved_step_ = step;
  spdlog::debug("[checkpoint] step {} committed: {} in {:.2f} s ({:.3f} s blocking training)", step,
                format_bytes(event["bytes"].get<double>()), event["seconds"].get<double>(),
                event["blocking_seconds"].get<double>());
  if (metrics) metrics->append(event);
}

void TrainingCheckpoints::handle_failure(std::int64_t step, SaveKind kind, ExitCode code,
                                         const std::string& error) {
  spdlog::error("[checkpoint] the save of step {} failed, nothing was committed: {}", step, error);
  const std::string committed =
      last_saved_step_ > 0 ? "the last committed step is " + std::to_string(last_saved_step_)
                           : "no step of this run is committed";
  if (kind != SaveKind::kPeriodic)
    throw comm::AgreedError(
        ExitCode::kCheckpoint, "checkpoint",
        std::string(kind == SaveKind::kFinal ? "the final save" : "the save on the stop signal") +
            " of step " + std::to_string(step) + " failed, so the run's work is not on disk (" +
            committed + "): " + error,
        "fix checkpoint.dir (space, quota, a file where the directory belongs) and resubmit: the "
        "run resumes from its last committed step");
  if (config_.checkpoint.fail_on_error)
    throw comm::AgreedError(code, "checkpoint",
                            "saving step " + std::to_string(step) + " failed: " + error,
                            "free disk space or fix the file system, or set "
                            "checkpoint.fail_on_error: false to train on without checkpoints");
  spdlog::warn(
      "[checkpoint] training continues (checkpoint.fail_on_error: false); the last "
      "committed step is {}",
      last_saved_step_);
}

void TrainingCheckpoints::settle(const checkpoint::AsyncSaveOutcome& outcome, MetricsLog* metrics) {
  if (!outcome.committed)
    return handle_failure(outcome.step, SaveKind::kPeriodic, outcome.code, outcome.error);
  report(outcome.step, checkpoint_event(outcome.result), metrics);
}

void TrainingCheckpoints::save(const checkpoint::TrainingProgress& progress, SaveKind kind,
                               MetricsLog* metrics) {
  const bool synchronous = kind != SaveKind::kPeriodic;
  const auto& k = config_.checkpoint;
  checkpoint::SaveRequest request;
  request.checkpoint_dir = k.dir;
  request.step = progress.step;
  request.tensors = state_.checkpoint_tensors();
  request.state = current_training_state(config_, progress, comm_.size(), inputs_);
  components_.add_sections(request);
  request.keep_last = k.keep_last;
  request.file_locking = k.hdf5_file_locking;
  // The host copies of device state are overwritten below: a save still
  // writing from them must be over first.
  if (!async_ || synchronous || state_.checkpoint_buffers_are_copies()) drain(metrics);
  state_.copy_to_host();  // device shards only: the step's values, in pinned host memory

  if (async_ && !synchronous) {
    const checkpoint::AsyncSaveStart start = async_->save(request, state_.saved_buffers());
    if (start.previous) settle(*start.previous, metrics);
    return;
  }
  try {
    const checkpoint::SaveResult result =
        checkpoint::save_checkpoint(comm_, request, state_.saved_buffers());
    report(result.step, checkpoint_event(result), metrics);
  } catch (const comm::AgreedError& e) {
    handle_failure(progress.step, kind, e.code(), e.what());
  }
}

void TrainingCheckpoints::before_update() {
  if (async_) async_->snapshot_fence();
}

void TrainingCheckpoints::poll(MetricsLog* metrics) {
  if (!async_) return;
  if (const auto outcome = async_->poll(comm_)) settle(*outcome, metrics);
}

void TrainingCheckpoints::drain(MetricsLog* metrics) {
  if (!async_ || !async_->in_flight()) return;
  if (const auto outcome = async_->wait()) settle(*outcome, metrics);
}

}  // namespace nss::train
