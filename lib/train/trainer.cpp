#include "train/trainer.h"

#include <chrono>
#include <memory>
#include <optional>

#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include "comm/agreement.h"
#include "comm/stop_signal.h"
#include "config/derived.h"
#include "core/units.h"
#include "data/data_loader.h"
#include "data/dataset_checks.h"
#include "data/token_dataset.h"
#include "memory/memory_meter.h"
#include "model/initial_weights.h"
#include "optim/adamw.h"
#include "optim/lr_schedule.h"
#include "train/compute_device.h"
#include "train/metrics_log.h"
#include "train/privacy_plan_section.h"
#include "train/private_training.h"
#include "train/sharded_llama.h"
#include "train/sharded_state.h"
#include "train/step_metrics.h"
#include "train/training_checkpoints.h"
#include "train/training_step.h"
#include "train/training_topology.h"
#include "train/validation.h"

namespace nss::train {
namespace {

// Every rank opens and checks the file: one message and one exit code for all.
std::shared_ptr<const data::TokenDataset> checked_train_dataset(
    comm::Communicator& comm, const config::Config& config, const data::ModelTokenizer& tokenizer) {
  std::shared_ptr<const data::TokenDataset> dataset;
  comm::run_on_all(comm, [&] {
    dataset = data::TokenDataset::open(config.data.path);
    const data::DatasetRequirements needs = data::training_requirements(config, tokenizer);
    data::check_dataset(*dataset, needs);
    data::check_targets_kept(*dataset, needs);
  });
  return dataset;
}

// `privacy`: a private run's, whose Poisson batches come from its key.
data::DataLoaderOptions loader_options(const config::Config& config, const comm::Communicator& comm,
                                       const checkpoint::TrainingProgress& progress,
                                       const PrivateTraining* privacy) {
  const auto& t = config.training;
  data::DataLoaderOptions options;
  options.sampling = {config.data.seq_len, t.global_batch_size,
                      t.micro_batch_size,  comm.rank(),
                      comm.size(),         static_cast<std::uint64_t>(config.run.seed)};
  options.packing = config.data.packing;
  options.long_documents = config.data.long_documents;
  options.num_workers = config.data.num_workers;
  options.prefetch_factor = config.data.prefetch_factor;
  options.start = progress.data;
  options.first_step = progress.step + 1;
  if (privacy && privacy->plan().poisson)
    options.poisson = data::PoissonSampling{privacy->poisson_key(), privacy->plan().sampling_rate};
  return options;
}

// What a private run logs once at its start (never the key).
void log_privacy_plan(const PrivateTraining& privacy, const config::Config& config) {
  const privacy::PrivacyPlan& p = privacy.plan();
  spdlog::info(
      "[privacy] DP-SGD over {} privacy units: q = {:.4g} (expected batch {}), sigma = {:.4g} "
      "({}), C = {}, delta = {:.3g}, {} accountant; epsilon after {} steps: {:.3f}",
      p.units, p.sampling_rate, p.expected_batch, p.noise_multiplier,
      p.calibrated ? "calibrated to privacy.target_epsilon" : "privacy.noise_multiplier",
      p.max_grad_norm, p.delta, privacy::accountant_kind_name(p.accountant), p.planned_steps,
      privacy.epsilon_after(p.planned_steps));
  if (config.training.grad_clip > 0)
    spdlog::info(
        "[privacy] training.grad_clip is not applied: each example's gradient is clipped to "
        "privacy.max_grad_norm instead");
  if (!p.poisson)
    spdlog::warn(
        "[privacy] privacy.sampling: shuffle draws fixed-size batches, but the reported epsilon "
        "assumes Poisson sampling: it is not a proven guarantee for this run");
}

// One rank's training job: the set-up in the constructor, then run() calls
// train_step() per step and reports, validates, checkpoints and agrees on
// stop requests between steps.
class Trainer {
 public:
  Trainer(const config::Config& config, TrainingTopology& topology, TrainerContext context);
  ExitCode run();

 private:
  StepOutcome train_step(std::int64_t step);
  void account(std::int64_t step, const StepOutcome& outcome);
  void report(const StepRecord& record);
  void validate(std::int64_t step);
  ExitCode stop(comm::StopRequest request, std::int64_t step);

  const config::Config& config_;
  comm::Communicator& comm_;
  TrainerContext context_;
  fsdp::ShardComms unit_comms_;
  StepComms step_comms_;
  // Before any tensor: the CPU meter counts the allocations made after it.
  std::unique_ptr<memory::MemoryMeter> meter_;
  data::ModelTokenizer tokenizer_;  // hashed once: the datasets must be made with it
  std::shared_ptr<const data::TokenDataset> dataset_;
  std::unique_ptr<ShardedLlama> model_;
  std::unique_ptr<ShardedState> state_;
  optim::AdamW adamw_;
  optim::LrSchedule schedule_;
  std::unique_ptr<MetricsLog> metrics_;     // rank 0
  std::optional<PrivateTraining> private_;  // privacy.enabled
  // Registered by every run: a resume may not switch privacy on or off.
  std::optional<PrivacyPlanSection> privacy_plan_;
  std::unique_ptr<TrainingCheckpoints> checkpoints_;
  checkpoint::TrainingProgress progress_;
  std::unique_ptr<data::DataLoader> loader_;
  std::optional<Validation> validation_;
  std::int64_t micro_steps_;
  std::int64_t tokens_per_step_;
  std::int64_t skipped_in_a_row_ = 0;
};

Trainer::Trainer(const config::Config& config, TrainingTopology& topology, TrainerContext context)
    : config_(config),
      comm_(topology.world()),
      context_(std::move(context)),
      unit_comms_(topology.unit_comms()),
      step_comms_(topology.step_comms()),
      meter_(memory::make_memory_meter(context_.device)),
      tokenizer_(data::model_tokenizer(config.model.from_pretrained)),
      dataset_(checked_train_dataset(comm_, config, tokenizer_)),
      model_(ShardedLlama::from_config(config, context_.plan, unit_comms_, context_.device)),
      adamw_({config.training.beta1, config.training.beta2, config.training.eps,
              config.training.weight_decay}),
      schedule_({config.training.lr, config.training.min_lr, config.training.warmup_steps,
                 config.training.max_steps, config.training.lr_schedule}),
      micro_steps_(config::accumulation_steps(config, comm_.size())),
      tokens_per_step_(config.training.global_batch_size * config.data.seq_len) {
  const auto& t = config.training;
  // Each rank reads (and checks) only its slices of model.from_pretrained: a
  // damaged one must end every rank with the same error, not abort the job.
  comm::run_on_all(comm_, [&] {
    model_->initialize(
        model::InitialWeights(config.model, t.lora, static_cast<std::uint64_t>(config.run.seed)));
  });
  state_ = std::make_unique<ShardedState>(*model_);
  const MemoryRecord memory{state_->bytes(), meter_->bytes_now()};
  spdlog::info("[train] {}", log_line(memory));
  if (comm_.rank() == 0) {
    metrics_ = std::make_unique<MetricsLog>(context_.run_dir + "/metrics.jsonl");
    metrics_->append(to_json(memory));
  }
  if (config.privacy.enabled) {
    comm::run_on_all(comm_, [&] { private_.emplace(config, dataset_->num_documents(), comm_); });
    log_privacy_plan(*private_, config);
  }
  privacy_plan_.emplace(private_ ? &private_->plan() : nullptr);
  checkpoints_ = std::make_unique<TrainingCheckpoints>(
      config, comm_, *state_, topology.take_checkpoint_writer_comm(),
      data::describe_preparation(dataset_->metadata()), context_.run_id);
  checkpoints_->register_component(*privacy_plan_);
  if (private_) checkpoints_->register_component(*private_);
  progress_ = checkpoints_->resume().value_or(checkpoint::TrainingProgress{});
  state_->applied_updates = progress_.applied_updates;
  // Every rank finds the same position beyond a changed dataset: one message, one exit code.
  comm::run_on_all(comm_, [&] {
    loader_ = std::make_unique<data::DataLoader>(
        dataset_, loader_options(config, comm_, progress_, private_ ? &*private_ : nullptr));
  });
  if (config.eval.interval_steps > 0)
    validation_.emplace(config, comm_, context_.device, tokenizer_);
  if (config::poisson_batches(config))
    spdlog::info(
        "[train] {} steps of {} sequences x {} tokens expected (Poisson batches); every rank runs "
        "the largest share's micro-steps of {}",
        t.max_steps, t.global_batch_size, config.data.seq_len, t.micro_batch_size);
  else
    spdlog::info("[train] {} steps of {} sequences x {} tokens; {} micro-steps of {} per rank",
                 t.max_steps, t.global_batch_size, config.data.seq_len, micro_steps_,
                 t.micro_batch_size);
}

StepOutcome Trainer::train_step(std::int64_t step) {
  const auto& t = config_.training;
  const auto seed = static_cast<std::uint64_t>(config_.run.seed);
  if (private_) {
    // A Poisson step's micro-steps (the same on every rank) come with its batches.
    data::MicroBatch first = loader_->next();
    const std::int64_t micro_steps = first.micro_steps;
    return run_private_step(
        *model_, *state_, adamw_,
        private_->step_settings(step, micro_steps, schedule_.at(step),
                                [this] { checkpoints_->before_update(); }),
        [&](std::int64_t micro) {
          data::MicroBatch batch = micro == 0 ? std::move(first) : loader_->next();
          return on_device(micro_batch_tensors(batch, seed, step), context_.device);
        },
        step_comms_);
  }
  const StepSettings settings{step, micro_steps_, schedule_.at(step), t.grad_clip,
                              [this] { checkpoints_->before_update(); }};
  return run_training_step(
      *model_, *state_, adamw_, settings,
      [&](std::int64_t) {
        return on_device(micro_batch_tensors(loader_->next(), seed, step), context_.device);
      },
      step_comms_);
}

// Where training stands after `step`, and the non-finite steps in a row.
void Trainer::account(std::int64_t step, const StepOutcome& outcome) {
  progress_.step = step;
  progress_.tokens_seen += tokens_per_step_;
  progress_.data = loader_->resume_position();
  progress_.applied_updates = state_->applied_updates;
  // A private step without targets (an empty Poisson batch) still adds its noise.
  if (!private_ && outcome.target_tokens == 0) {
    ++progress_.skipped_steps;
    spdlog::warn(
        "[train] step {}: no label of the global batch is a target (the loss mask is 0 "
        "everywhere); the step was skipped on every rank",
        step);
    return;
  }
  if (!outcome.skipped) {
    skipped_in_a_row_ = 0;
    return;
  }
  ++progress_.skipped_steps;
  spdlog::warn(
      "[train] step {}: loss {} / gradient norm {} is not finite; the update was skipped on "
      "every rank ({} in a row)",
      step, outcome.loss, outcome.grad_norm, ++skipped_in_a_row_);
  if (skipped_in_a_row_ >= config_.training.max_skipped_steps)
    throw InternalError("train",
                        std::to_string(skipped_in_a_row_) +
                            " consecutive steps had a non-finite loss or gradient norm",
                        "lower training.lr, enable or tighten training.grad_clip, or use "
                        "fp32 (training.dtype); the model diverged");
}

void Trainer::report(const StepRecord& step_record) {
  if (step_record.step % config_.logging.interval_steps != 0 &&
      step_record.step != step_record.max_steps)
    return;
  StepRecord record = step_record;
  // Rank 0 alone logs and writes metrics: the accountant runs there only.
  if (private_ && comm_.rank() == 0) record.epsilon = private_->epsilon_after(record.step);
  spdlog::info("[train] {}", log_line(record));
  if (metrics_) metrics_->append(to_json(record));
}

void Trainer::validate(std::int64_t step) {
  if (!validation_ || !validation_->due(step)) return;
  const double val_loss = validation_->loss(*model_);
  spdlog::info("[train] step {}: validation loss {:.4f}", step, val_loss);
  if (metrics_) metrics_->append({{"event", "eval"}, {"step", step}, {"val_loss", val_loss}});
}

ExitCode Trainer::stop(comm::StopRequest request, std::int64_t step) {
  spdlog::warn("[train] {} received: saving step {} and stopping", comm::describe(request), step);
  const auto save_start = std::chrono::steady_clock::now();
  checkpoints_->save(progress_, SaveKind::kStop, metrics_.get());
  spdlog::warn(
      "[train] stopping after step {}: the save took {:.2f} s (the signal's lead time must "
      "exceed it)",
      step, std::chrono::duration<double>(std::chrono::steady_clock::now() - save_start).count());
  return comm::exit_code_for(request);
}

ExitCode Trainer::run() {
  const std::int64_t max_steps = config_.training.max_steps;
  StepMetrics metrics({&comm_, &step_comms_.shard_group, unit_comms_.shard, unit_comms_.replicate},
                      *meter_, tokens_per_step_, progress_.step + 1, max_steps);
  for (std::int64_t step = progress_.step + 1; step <= max_steps; ++step) {
    metrics.begin_step();
    const StepOutcome outcome = train_step(step);
    account(step, outcome);
    report(metrics.end_step(step, outcome, progress_.skipped_steps));
    validate(step);
    checkpoints_->poll(metrics_.get());
    const comm::StopRequest request = comm::agree_on_stop_request(comm_);
    if (request != comm::StopRequest::kNone) return stop(request, step);
    if (checkpoints_->due(step) && step < max_steps)
      checkpoints_->save(progress_, SaveKind::kPeriodic, metrics_.get());
  }
  // The last save of a run is synchronous, so a finished run is always on disk.
  if (checkpoints_->last_saved_step() != progress_.step)
    checkpoints_->save(progress_, SaveKind::kFinal, metrics_.get());
  checkpoints_->drain(metrics_.get());
  spdlog::info("[train] finished {} steps in {}", max_steps, format_duration(metrics.elapsed_s()));
  return ExitCode::kOk;
}

}  // namespace

ExitCode train(const config::Config& config, TrainingTopology& topology, TrainerContext context) {
  torch::set_num_threads(context.threads);
  return Trainer(config, topology, std::move(context)).run();
}

}  // namespace nss::train
