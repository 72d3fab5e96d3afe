#include "train/trainer.h"

#include <chrono>
#include <cmath>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include "config/load.h"
#include "core/units.h"
#include "data/data_loader.h"
#include "data/dataset_checks.h"
#include "data/sequential_reader.h"
#include "data/token_dataset.h"
#include "memory/memory_meter.h"
#include "model/initial_weights.h"
#include "optim/lr_schedule.h"
#include "train/compute_device.h"
#include "train/metrics_log.h"
#include "train/stop_signal.h"
#include "train/training_checkpoints.h"
#include "train/training_step.h"

namespace nss::train {
namespace {

using Clock = std::chrono::steady_clock;

MicroBatchTensors to_tensors(const data::TokenBatch& batch, std::uint64_t seed, std::int64_t step) {
  auto tokens = torch::from_blob(const_cast<std::int64_t*>(batch.tokens.data()),
                                 {batch.rows, batch.row_length()}, torch::kInt64);
  MicroBatchTensors out;
  // clone(): from_blob borrows the batch's vector, which dies with the batch.
  out.inputs = tokens.narrow(1, 0, batch.seq_len).clone();
  out.targets = tokens.narrow(1, 1, batch.seq_len).clone();
  out.randomness = {seed, step, batch.sample_ids};
  return out;
}

std::string format_duration(double seconds) {
  const auto total = static_cast<long long>(std::max(0.0, seconds));
  char text[32];
  if (total >= 3600)
    std::snprintf(text, sizeof text, "%lldh%02lldm", total / 3600, total / 60 % 60);
  else
    std::snprintf(text, sizeof text, "%lldm%02llds", total / 60, total % 60);
  return text;
}

// Mean token loss over eval.batches in-order global batches of the held-out set.
double validation_loss(ShardedLlama& model, const config::Config& config,
                       comm::Communicator& comm) {
  const auto dataset = data::TokenDataset::open(config.eval.path);
  const std::int64_t seq_len = config.data.seq_len;
  data::check_dataset(*dataset, {seq_len, config.training.global_batch_size * config.eval.batches,
                                 config.model.vocab_size});
  data::SequentialBatchReader reader(dataset, seq_len, config.training.global_batch_size,
                                     config.eval.batches, comm.rank(), comm.size());
  const double scale =
      1.0 / static_cast<double>(config.training.global_batch_size * config.eval.batches * seq_len);
  torch::NoGradGuard no_grad;
  double total = 0;
  for (std::int64_t k = 0; k < reader.num_batches(); ++k) {
    const data::TokenBatch batch = reader.batch(k);
    // Micro-batch sized pieces keep evaluation within the training footprint.
    for (std::int64_t row = 0; row < batch.rows; row += config.training.micro_batch_size) {
      const std::int64_t rows = std::min(config.training.micro_batch_size, batch.rows - row);
      data::TokenBatch piece;
      piece.rows = rows;
      piece.seq_len = seq_len;
      piece.tokens.assign(batch.tokens.begin() + row * batch.row_length(),
                          batch.tokens.begin() + (row + rows) * batch.row_length());
      piece.sample_ids.assign(batch.sample_ids.begin() + row,
                              batch.sample_ids.begin() + row + rows);
      const MicroBatchTensors t =
          on_device(to_tensors(piece, 0, 0), model.units().front()->options().device);
      total += model.loss(t.inputs, t.targets, scale, nullptr).item<double>();
    }
  }
  model.finish_collectives();
  comm::CollectiveLabel label(comm, "validation loss");
  comm.all_reduce(&total, 1, comm::ReduceOp::kSum);
  return total;
}

// This rank's share of the model state by category, next to what the
// device's meter measures: the 1/N of FSDP made visible.
nlohmann::json memory_event(const ShardedState& state, const memory::MemoryMeter& meter) {
  const ShardedState::Bytes bytes = state.bytes();
  return {{"event", "memory"},
          {"masters_bytes", bytes.masters},
          {"gradients_bytes", bytes.gradients},
          {"optimizer_bytes", bytes.moments},
          {"frozen_bytes", bytes.frozen},
          {"model_state_bytes", bytes.model_state()},
          {"largest_gathered_unit_bytes", bytes.largest_gathered_unit},
          {"measured_tensor_bytes", meter.bytes_now()}};
}

}  // namespace

ExitCode train(const config::Config& config, comm::Communicator& comm, TrainerContext context) {
  const auto& t = config.training;
  torch::set_num_threads(context.threads);
  // Before any tensor: the CPU meter counts the allocations made after it.
  const auto meter = memory::make_memory_meter(context.device);

  const auto dataset = data::TokenDataset::open(config.data.path);
  data::check_dataset(*dataset,
                      {config.data.seq_len, t.global_batch_size, config.model.vocab_size});

  const fsdp::ShardOptions shard_options = train::shard_options(t, context.device);
  comm::Communicator& unit_comm = context.unit_comm ? *context.unit_comm : comm;
  ShardedLlama model(config.model, t.lora, t.weight_decay_embeddings, unit_comm, shard_options,
                     config.data.seq_len);
  model.initialize(
      model::InitialWeights(config.model, t.lora, static_cast<std::uint64_t>(config.run.seed)));
  ShardedState state(model);
  const optim::AdamW adamw({t.beta1, t.beta2, t.eps, t.weight_decay});
  const optim::LrSchedule schedule({t.lr, t.min_lr, t.warmup_steps, t.max_steps, t.lr_schedule});
  const nlohmann::json memory = memory_event(state, *meter);
  spdlog::info(
      "[train] model state on this rank: masters {}, gradients {} (during backward), "
      "AdamW moments {}, frozen base {}; largest gathered unit {}; tensors now {}",
      format_bytes(memory["masters_bytes"].get<double>()),
      format_bytes(memory["gradients_bytes"].get<double>()),
      format_bytes(memory["optimizer_bytes"].get<double>()),
      format_bytes(memory["frozen_bytes"].get<double>()),
      format_bytes(memory["largest_gathered_unit_bytes"].get<double>()),
      format_bytes(memory["measured_tensor_bytes"].get<double>()));

  std::unique_ptr<MetricsLog> metrics;
  if (comm.rank() == 0) {
    metrics = std::make_unique<MetricsLog>(context.run_dir + "/metrics.jsonl");
    metrics->append(memory);
  }
  TrainingCheckpoints checkpoints(config, comm, state, std::move(context.checkpoint_writer_comm));
  TrainingProgress progress = checkpoints.resume().value_or(TrainingProgress{});
  state.applied_updates = progress.applied_updates;
  const std::int64_t first_step = progress.step + 1;

  data::DataLoaderOptions loader_options;
  loader_options.sampling = {config.data.seq_len, t.global_batch_size,
                             t.micro_batch_size,  comm.rank(),
                             comm.size(),         static_cast<std::uint64_t>(config.run.seed)};
  loader_options.num_workers = config.data.num_workers;
  loader_options.prefetch_factor = config.data.prefetch_factor;
  loader_options.start = progress.data;
  loader_options.first_step = first_step;
  data::DataLoader loader(dataset, loader_options);

  const std::int64_t micro_steps = config::accumulation_steps(config, comm.size());
  const std::int64_t tokens_per_step = t.global_batch_size * config.data.seq_len;
  spdlog::info("[train] {} steps of {} sequences x {} tokens; {} micro-steps of {} per rank",
               t.max_steps, t.global_batch_size, config.data.seq_len, micro_steps,
               t.micro_batch_size);

  std::int64_t skipped_in_a_row = 0;
  const auto run_start = Clock::now();
  meter->reset_peak();
  for (std::int64_t step = first_step; step <= t.max_steps; ++step) {
    const auto step_start = Clock::now();
    const comm::CommStats comm_before = comm.stats();
    const comm::CommStats unit_comm_before = unit_comm.stats();
    StepSettings settings{step,
                          micro_steps,
                          1.0 / static_cast<double>(tokens_per_step),
                          schedule.at(step),
                          t.grad_clip,
                          [&] { checkpoints.before_update(); }};
    const StepOutcome outcome = run_training_step(
        model, state, adamw, settings,
        [&](std::int64_t) {
          return on_device(
              to_tensors(loader.next(), static_cast<std::uint64_t>(config.run.seed), step),
              context.device);
        },
        comm);
    const double step_seconds = std::chrono::duration<double>(Clock::now() - step_start).count();

    progress.step = step;
    progress.tokens_seen += tokens_per_step;
    progress.data = loader.resume_position();
    progress.applied_updates = state.applied_updates;
    if (outcome.skipped) {
      ++progress.skipped_steps;
      spdlog::warn(
          "[train] step {}: loss {} / gradient norm {} is not finite; the update was "
          "skipped on every rank ({} in a row)",
          step, outcome.loss, outcome.grad_norm, ++skipped_in_a_row);
      if (skipped_in_a_row >= t.max_skipped_steps)
        throw InternalError("train",
                            std::to_string(skipped_in_a_row) +
                                " consecutive steps had a non-finite loss or gradient norm",
                            "lower training.lr, enable or tighten training.grad_clip, or use "
                            "fp32 (training.dtype); the model diverged");
    } else {
      skipped_in_a_row = 0;
    }

    if (step % config.logging.interval_steps == 0 || step == t.max_steps) {
      const std::int64_t mem_bytes = meter->bytes_now();
      const std::int64_t peak_mem_bytes = meter->peak_bytes();
      double step_comm_bytes = comm.stats().since(comm_before).total_bytes();
      if (&unit_comm != &comm)
        step_comm_bytes += unit_comm.stats().since(unit_comm_before).total_bytes();
      const double tokens_per_s = static_cast<double>(tokens_per_step) / step_seconds;
      const double elapsed = std::chrono::duration<double>(Clock::now() - run_start).count();
      const double eta = elapsed / static_cast<double>(step - first_step + 1) *
                         static_cast<double>(t.max_steps - step);
      spdlog::info(
          "[train] step {}/{} | loss {:.4f} | lr {:.2e} | grad {:.3f} | {:.0f} tok/s | "
          "{:.3f} s/step | mem {} (peak {}) | ETA {}",
          step, t.max_steps, outcome.loss, outcome.lr, outcome.grad_norm, tokens_per_s,
          step_seconds, format_bytes(static_cast<double>(mem_bytes)),
          format_bytes(static_cast<double>(peak_mem_bytes)), format_duration(eta));
      if (metrics) {
        metrics->append({{"step", step},
                         {"loss", outcome.loss},
                         {"lr", outcome.lr},
                         {"grad_norm", outcome.grad_norm},
                         {"tokens_per_s", tokens_per_s},
                         {"step_time_s", step_seconds},
                         {"mem_bytes", mem_bytes},
                         {"peak_mem_bytes", peak_mem_bytes},
                         {"comm_bytes", step_comm_bytes},
                         {"skipped", outcome.skipped},
                         {"skipped_steps", progress.skipped_steps}});
      }
    }

    if (config.eval.interval_steps > 0 &&
        (step % config.eval.interval_steps == 0 || step == t.max_steps)) {
      const double val_loss = validation_loss(model, config, comm);
      spdlog::info("[train] step {}: validation loss {:.4f}", step, val_loss);
      if (metrics) metrics->append({{"event", "eval"}, {"step", step}, {"val_loss", val_loss}});
    }

    checkpoints.poll(metrics.get());
    const StopRequest stop = agree_on_stop_request(comm);
    if (stop != StopRequest::kNone) {
      spdlog::warn("[train] {} received: saving step {} and stopping", describe(stop), step);
      const auto save_start = Clock::now();
      checkpoints.save(progress, /*synchronous=*/true, metrics.get());
      spdlog::warn(
          "[train] stopping after step {}: the save took {:.2f} s (the signal's lead "
          "time must exceed it)",
          step, std::chrono::duration<double>(Clock::now() - save_start).count());
      return exit_code_for(stop);
    }
    if (checkpoints.due(step) && step < t.max_steps)
      checkpoints.save(progress, /*synchronous=*/false, metrics.get());
  }
  // The last save of a run is synchronous, so a finished run is always on disk.
  if (checkpoints.last_saved_step() != progress.step)
    checkpoints.save(progress, /*synchronous=*/true, metrics.get());
  checkpoints.drain(metrics.get());
  spdlog::info("[train] finished {} steps in {}", t.max_steps,
               format_duration(std::chrono::duration<double>(Clock::now() - run_start).count()));
  return ExitCode::kOk;
}

}  // namespace nss::train
