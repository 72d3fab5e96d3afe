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
#include "train/sharded_llama.h"
#include "train/sharded_state.h"
#include "train/step_metrics.h"
#include "train/training_checkpoints.h"
#include "train/training_step.h"
#include "train/training_step_runner.h"
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

// What every kind of step reads its batches with (StepRunner::loader_options
// adds its own).
data::DataLoaderOptions loader_options(const config::Config& config, const comm::Communicator& comm,
                                       const checkpoint::TrainingProgress& progress) {
  const auto& t = config.training;
  data::DataLoaderOptions options;
  // The ranks of a tensor group read the same batches.
  options.sampling = {config.data.seq_len,
                      t.global_batch_size,
                      t.micro_batch_size,
                      config::data_parallel_rank(config, comm.rank()),
                      config::data_parallel_ranks(config, comm.size()),
                      static_cast<std::uint64_t>(config.run.seed)};
  options.packing = config.data.packing;
  options.long_documents = config.data.long_documents;
  options.num_workers = config.data.num_workers;
  options.prefetch_factor = config.data.prefetch_factor;
  options.start = progress.data;
  options.first_step = progress.step + 1;
  return options;
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
  std::unique_ptr<MetricsLog> metrics_;  // rank 0
  std::unique_ptr<StepRunner> runner_;   // the kind of step, chosen once by the plan
  std::unique_ptr<TrainingCheckpoints> checkpoints_;
  checkpoint::TrainingProgress progress_;
  std::unique_ptr<data::DataLoader> loader_;
  std::optional<Validation> validation_;
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
      model_(ShardedLlama::from_config(config, context_.plan, unit_comms_, context_.device,
                                       topology.tensor_comms())),
      adamw_(adamw_of(config.training)),
      schedule_({config.training.lr, config.training.min_lr, config.training.warmup_steps,
                 config.training.max_steps, config.training.lr_schedule}),
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
  runner_ =
      make_training_step_runner(config, context_.plan, {*model_, *state_, adamw_, step_comms_},
                                comm_, dataset_->num_documents());
  checkpoints_ = std::make_unique<TrainingCheckpoints>(
      config, comm_, *state_, topology.take_checkpoint_writer_comm(),
      data::describe_preparation(dataset_->metadata()), context_.run_id);
  runner_->register_state(*checkpoints_);
  progress_ = checkpoints_->resume().value_or(checkpoint::TrainingProgress{});
  state_->applied_updates = progress_.applied_updates;
  // Every rank finds the same position beyond a changed dataset: one message, one exit code.
  comm::run_on_all(comm_, [&] {
    loader_ = std::make_unique<data::DataLoader>(
        dataset_, runner_->loader_options(loader_options(config, comm_, progress_)));
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
                 t.max_steps, t.global_batch_size, config.data.seq_len,
                 loader_->plan().accumulation_steps(), t.micro_batch_size);
}

StepOutcome Trainer::train_step(std::int64_t step) {
  const auto seed = static_cast<std::uint64_t>(config_.run.seed);
  return runner_->run(
      step, schedule_.at(step),
      [&] {
        const data::MicroBatch batch = loader_->next();
        MicroBatchTensors tensors = micro_batch_tensors(batch, seed, step);
        tensors.micro_steps = batch.micro_steps;
        return on_device(std::move(tensors), context_.device);
      },
      [this] { checkpoints_->before_update(); });
}

// Where training stands after `step`, and the non-finite steps in a row.
void Trainer::account(std::int64_t step, const StepOutcome& outcome) {
  progress_.step = step;
  progress_.tokens_seen += tokens_per_step_;
  progress_.data = loader_->resume_position();
  progress_.applied_updates = state_->applied_updates;
  // A private step without targets (an empty Poisson batch) still adds its noise.
  if (runner_->skips_steps_without_targets() && outcome.target_tokens == 0) {
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
  // Rank 0 alone logs and writes metrics: a privacy accountant runs there only.
  if (comm_.rank() == 0) runner_->annotate(record);
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
  const model::TensorParallel* tp = model_->tensor_parallel();
  StepMetrics metrics({&comm_, &step_comms_.shard_group, unit_comms_.shard, unit_comms_.replicate,
                       tp ? tp->group : nullptr, tp ? tp->kv_group : nullptr},
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
