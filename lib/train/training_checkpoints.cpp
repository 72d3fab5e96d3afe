#include "train/training_checkpoints.h"

#include <cstdio>
#include <filesystem>

#include <spdlog/spdlog.h>
#include <torch/torch.h>
#include <torch/version.h>

#include "checkpoint/async_saver.h"
#include "checkpoint/load.h"
#include "checkpoint/save.h"
#include "comm/agreement.h"
#include "comm/mpi_communicator.h"
#include "config/load.h"
#include "core/build_info.h"
#include "core/sha256.h"
#include "core/units.h"
#include "train/metrics_log.h"

namespace nss::train {
namespace {

std::string unit_dataset(const char* prefix, std::size_t unit) {
  char name[64];
  std::snprintf(name, sizeof name, "%s/unit_%03zu", prefix, unit);
  return name;
}

// One buffer per unit and kind: "/model/unit_003" holds the master shard,
// "/optimizer/exp_avg/unit_003" its first moment, and so on. Pieces name the
// parameters (or "optimizer.exp_avg.<name>") and the element ranges held.
checkpoint::ShardBuffer shard_buffer(const std::string& dataset, const std::string& name_prefix,
                                     const torch::Tensor& tensor, const fsdp::FlatLayout& layout,
                                     int rank) {
  checkpoint::ShardBuffer buffer{
      dataset, DType::kFloat32, tensor.data_ptr(), static_cast<std::uint64_t>(tensor.numel()), {}};
  for (const auto& piece : layout.shard_pieces(true, rank)) {
    buffer.pieces.push_back({name_prefix + layout.params()[piece.param].name,
                             static_cast<std::uint64_t>(piece.tensor_offset),
                             static_cast<std::uint64_t>(piece.length),
                             static_cast<std::uint64_t>(piece.shard_offset)});
  }
  return buffer;
}

// The frozen base a LoRA run trains against: its files and their hashes (or the
// seed of a random base). A resumed run must use the same one.
nlohmann::json lora_base_identity(const config::Config& config) {
  const auto& model = config.model;
  if (model.from_pretrained.empty())
    return {{"path", ""}, {"initialisation_seed", config.run.seed}};
  nlohmann::json files = nlohmann::json::object();
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

void require_same_base(const nlohmann::json& saved, const nlohmann::json& current,
                       const std::string& step_dir) {
  if (!saved.is_object()) return;  // not a LoRA checkpoint
  const bool same =
      saved.value("files", nlohmann::json()) == current.value("files", nlohmann::json()) &&
      saved.value("initialisation_seed", nlohmann::json()) ==
          current.value("initialisation_seed", nlohmann::json());
  if (same) return;
  throw CheckpointError(
      "checkpoint",
      "the LoRA checkpoint " + step_dir + " was trained on base model '" +
          saved.value("path", std::string()) + "' " + saved.dump() + ", but this run's base is '" +
          current.value("path", std::string()) + "' " + current.dump(),
      "point model.from_pretrained at the base the adapters were trained on (same files), or "
      "start fresh with checkpoint.resume: never");
}

// The metrics.jsonl record of a committed save.
nlohmann::json checkpoint_event(const checkpoint::SaveResult& result) {
  return {{"event", "checkpoint"},
          {"step", result.step},
          {"bytes", result.bytes},
          {"seconds", result.seconds},
          {"blocking_seconds", result.blocking_seconds}};
}

}  // namespace

TrainingCheckpoints::TrainingCheckpoints(const config::Config& config, comm::Communicator& comm,
                                         ShardedLlama& model, OptimizerState& state)
    : config_(config), comm_(comm), state_(state) {
  auto& units = model.units();
  for (std::size_t u = 0; u < units.size(); ++u) {
    const auto& layout = units[u]->layout();
    for (const auto& param : layout.params())
      if (param.trainable) tensors_.push_back({param.name, param.shape, DType::kFloat32});
  }
  const std::size_t parameters = tensors_.size();
  for (const char* moment : {"optimizer.exp_avg.", "optimizer.exp_avg_sq."})
    for (std::size_t i = 0; i < parameters; ++i)
      tensors_.push_back({moment + tensors_[i].name, tensors_[i].shape, DType::kFloat32});

  // The checkpoint library reads and writes host memory: device shards go
  // through pinned host mirrors (CPU shards are their own mirror).
  std::vector<torch::Tensor> saved;
  for (std::size_t u = 0; u < units.size(); ++u) {
    if (units[u]->master().numel() == 0) continue;
    for (torch::Tensor* t : {&units[u]->master(), &state.exp_avg()[u], &state.exp_avg_sq()[u]})
      saved.push_back(*t);
  }
  mirror_ = std::make_unique<HostMirror>(saved);
  for (std::size_t u = 0, i = 0; u < units.size(); ++u) {
    auto& unit = *units[u];
    if (unit.master().numel() == 0) continue;
    const int rank = comm.rank();
    buffers_.push_back(
        shard_buffer(unit_dataset("/model", u), "", mirror_->host(i++), unit.layout(), rank));
    buffers_.push_back(shard_buffer(unit_dataset("/optimizer/exp_avg", u), "optimizer.exp_avg.",
                                    mirror_->host(i++), unit.layout(), rank));
    buffers_.push_back(shard_buffer(unit_dataset("/optimizer/exp_avg_sq", u),
                                    "optimizer.exp_avg_sq.", mirror_->host(i++), unit.layout(),
                                    rank));
  }
  if (config.training.lora.enabled) {
    comm::run_on_root(comm, 0, [&] { lora_base_ = lora_base_identity(config); });
    std::string text = lora_base_.dump();
    comm::broadcast_text(comm, text, 0);
    lora_base_ = nlohmann::json::parse(text);
  }
  if (config.checkpoint.async) {
    async_ = std::make_unique<checkpoint::AsyncCheckpointer>(
        comm::MpiCommunicator::create(MPI_COMM_WORLD), checkpoint::SnapshotMode::kOverlapped);
    async_->reserve_staging(buffers_);
  }
}

TrainingCheckpoints::~TrainingCheckpoints() = default;

std::optional<TrainingProgress> TrainingCheckpoints::resume() {
  const auto& k = config_.checkpoint;
  std::optional<checkpoint::LoadResult> loaded;
  {
    torch::NoGradGuard no_grad;  // the loader writes into the masters' storage
    loaded = checkpoint::resume_checkpoint(comm_, k.dir, k.resume, tensors_, buffers_,
                                           {k.load_optimizer, k.hdf5_file_locking});
    if (loaded) mirror_->to_device();
  }
  if (!loaded) {
    spdlog::info(
        "[checkpoint] no checkpoint to resume from in {} (checkpoint.resume: {}): "
        "starting at step 1",
        k.dir, k.resume);
    return std::nullopt;
  }
  const nlohmann::json& saved = loaded->state;
  comm::run_on_all(comm_, [&] {
    if (config_.training.lora.enabled)
      require_same_base(saved.value("lora_base", nlohmann::json()), lora_base_, loaded->step_dir);
  });
  TrainingProgress progress;
  progress.step = loaded->step;
  progress.tokens_seen = saved.value("tokens_seen", std::int64_t{0});
  progress.data = {saved["data"].value("epoch", std::int64_t{0}),
                   saved["data"].value("cursor", std::int64_t{0})};
  progress.skipped_steps = saved["optimizer"].value("skipped_steps", std::int64_t{0});
  progress.applied_updates =
      k.load_optimizer ? saved["optimizer"].value("applied_updates", std::int64_t{0}) : 0;

  const auto& data = saved["data"];
  const auto& t = config_.training;
  if (data.value("seed", config_.run.seed) != config_.run.seed ||
      data.value("seq_len", config_.data.seq_len) != config_.data.seq_len ||
      data.value("global_batch_size", t.global_batch_size) != t.global_batch_size ||
      data.value("path", config_.data.path) != config_.data.path)
    spdlog::warn(
        "[checkpoint] the data settings differ from the checkpoint's ({}): training "
        "continues, but not with the samples an uninterrupted run would have seen",
        data.dump());
  spdlog::info(
      "[checkpoint] resumed from {} (step {}, saved by {} ranks, now {}): read {} in "
      "{:.2f} s; {}",
      loaded->step_dir, loaded->step, loaded->saved_world_size, comm_.size(),
      format_bytes(static_cast<double>(loaded->bytes_read)), loaded->seconds,
      k.load_optimizer ? "optimizer state restored"
                       : "model weights only (checkpoint.load_optimizer: false)");
  last_saved_step_ = loaded->step;
  return progress;
}

bool TrainingCheckpoints::due(std::int64_t step) const {
  const std::int64_t interval = config_.checkpoint.interval_steps;
  return interval > 0 && step % interval == 0;
}

nlohmann::json TrainingCheckpoints::state_of(const TrainingProgress& progress) const {
  const auto& t = config_.training;
  const std::string resolved = config::to_yaml(config_, /*with_comments=*/false);
  nlohmann::json state = {
      {"step", progress.step},
      {"tokens_seen", progress.tokens_seen},
      {"data",
       {{"epoch", progress.data.epoch},
        {"cursor", progress.data.cursor},
        {"seed", config_.run.seed},
        {"path", config_.data.path},
        {"seq_len", config_.data.seq_len},
        {"global_batch_size", t.global_batch_size}}},
      // Every random choice is a counter-based function of (seed, step, sample, layer).
      {"rng", {{"kind", "counter-based"}, {"seed", config_.run.seed}}},
      {"scheduler",
       {{"kind", t.lr_schedule},
        {"lr", t.lr},
        {"min_lr", t.min_lr},
        {"warmup_steps", t.warmup_steps},
        {"max_steps", t.max_steps}}},
      {"optimizer",
       {{"applied_updates", progress.applied_updates}, {"skipped_steps", progress.skipped_steps}}},
      {"world_size", comm_.size()},
      {"config", resolved},
      {"config_sha256", sha256_hex(resolved)},
      {"versions",
       {{"nss_hpc", build_version()},
        {"git_revision", build_git_revision()},
        {"libtorch", TORCH_VERSION}}},
  };
  if (!lora_base_.is_null()) state["lora_base"] = lora_base_;
  return state;
}

void TrainingCheckpoints::report(std::int64_t step, const nlohmann::json& event,
                                 MetricsLog* metrics) {
  last_saved_step_ = step;
  spdlog::debug("[checkpoint] step {} committed: {} in {:.2f} s ({:.3f} s blocking training)", step,
                format_bytes(event["bytes"].get<double>()), event["seconds"].get<double>(),
                event["blocking_seconds"].get<double>());
  if (metrics) metrics->append(event);
}

void TrainingCheckpoints::handle_failure(std::int64_t step, ExitCode code,
                                         const std::string& error) {
  spdlog::error("[checkpoint] the save of step {} failed, nothing was committed: {}", step, error);
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
  if (!outcome.committed) return handle_failure(outcome.step, outcome.code, outcome.error);
  report(outcome.step, checkpoint_event(outcome.result), metrics);
}

void TrainingCheckpoints::save(const TrainingProgress& progress, bool synchronous,
                               MetricsLog* metrics) {
  const auto& k = config_.checkpoint;
  checkpoint::SaveRequest request;
  request.checkpoint_dir = k.dir;
  request.step = progress.step;
  request.tensors = tensors_;
  request.state = state_of(progress);
  request.keep_last = k.keep_last;
  request.file_locking = k.hdf5_file_locking;
  mirror_->to_host();  // device shards only: the step's values, in pinned host memory

  if (async_ && !synchronous) {
    const checkpoint::AsyncSaveStart start = async_->save(request, buffers_);
    if (start.previous) settle(*start.previous, metrics);
    return;
  }
  drain(metrics);
  try {
    const checkpoint::SaveResult result = checkpoint::save_checkpoint(comm_, request, buffers_);
    report(result.step, checkpoint_event(result), metrics);
  } catch (const comm::AgreedError& e) {
    handle_failure(progress.step, e.code(), e.what());
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
