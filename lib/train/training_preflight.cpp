#include "train/training_preflight.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>

#include "core/units.h"
#include "memory/memory_meter.h"
#include "model/param_spec.h"
#include "preflight/memory_checks.h"
#include "preflight/memory_model.h"
#include "preflight/token_data_checks.h"
#include "train/synthetic_step.h"

namespace nss::train {
namespace {

using preflight::Check;
using preflight::MemoryMeasurement;

constexpr const char* kSyntheticId = "memory.synthetic_step";
constexpr const char* kParametersId = "model.parameters";

std::string bytes(double value) {
  return format_bytes(value);
}

std::string signed_percent(double fraction) {
  char text[32];
  std::snprintf(text, sizeof text, "%+.1f%%", fraction * 100);
  return text;
}

// Tensor bytes one rank may hold at micro-batch `micro`: the budget less what
// the rank needs besides tensors (nullopt: no budget known, no cap).
std::optional<std::int64_t> tensor_allowance(const preflight::PreflightContext& context,
                                             const preflight::PreflightReport& report,
                                             std::int64_t micro, std::uint64_t baseline) {
  if (!report.memory.budget_bytes) return std::nullopt;
  const std::uint64_t extras = preflight::extras_bytes(preflight::memory_extras(
      context.config, context.world_size, context.device, micro, baseline));
  return static_cast<std::int64_t>(*report.memory.budget_bytes) - static_cast<std::int64_t>(extras);
}

std::int64_t accumulation(const config::Config& config, int world_size, std::int64_t micro) {
  return std::max<std::int64_t>(1, config.training.global_batch_size / (micro * world_size));
}

// The largest micro-batch the budget check would name, for the remediation of
// a synthetic step that ran out of memory (the budget check itself follows).
std::string suggestion(const preflight::PreflightContext& context,
                       preflight::PreflightReport& report, std::uint64_t baseline) {
  preflight::check_memory_budget(context, report, baseline);
  if (!report.memory.max_micro_batch_size)
    return "no micro-batch size fits: give each rank more memory (Slurm --mem, fewer ranks per "
           "node), run more ranks, or shorten data.seq_len";
  return "set training.micro_batch_size=" + std::to_string(*report.memory.max_micro_batch_size) +
         " (the largest that fits, see memory.budget), give each rank more memory, or run more "
         "ranks";
}

// How far the analytic memory model may be off the synthetic step before the
// check warns (docs/preflight.md: within 0.2% at the benchmark's shapes).
constexpr double kModelTolerance = 0.10;

}  // namespace

std::vector<std::int64_t> synthetic_micro_batches(const config::Config& config, int world_size) {
  const std::int64_t micro = config.training.micro_batch_size;
  std::vector<std::int64_t> sizes{micro};
  const auto choices = preflight::micro_batch_choices(config, world_size);
  std::optional<std::int64_t> smaller, larger;
  for (const std::int64_t m : choices) {
    if (m < micro) smaller = m;
    if (m > micro && !larger) larger = m;
  }
  if (smaller)
    sizes.insert(sizes.begin(), *smaller);  // measured first: its result survives an OOM above
  else if (larger)
    sizes.push_back(*larger);
  return sizes;
}

Check check_parameter_count(const config::Config& config, std::int64_t built_total,
                            std::int64_t built_trainable, preflight::PreflightReport& report) {
  const model::ParameterCount exact = model::count_parameters(config.model, config.training.lora);
  const model::ParameterCount formula =
      model::parameter_count_formula(config.model, config.training.lora);
  report.model.parameters = built_total;
  report.model.trainable_parameters = built_trainable;
  const std::string counts = "built model " + std::to_string(built_total) + " parameters (" +
                             std::to_string(built_trainable) + " trainable); from the shapes " +
                             std::to_string(exact.total) + " (" + std::to_string(exact.trainable) +
                             "); shape formula " + std::to_string(formula.total) + " (" +
                             std::to_string(formula.trainable) + ")";
  const bool agree = exact.total == built_total && exact.trainable == built_trainable &&
                     formula.total == exact.total && formula.trainable == exact.trainable;
  if (!agree)
    return Check::fail(kParametersId, ExitCode::kInternal,
                       "the parameter counts disagree: " + counts,
                       "this is a bug in nss_hpc; please report it with preflight.json")
        .with_numbers(double(exact.total), double(built_total), std::nullopt, "parameters");
  return Check::pass(kParametersId, ExitCode::kInternal, counts)
      .with_numbers(double(exact.total), double(built_total), std::nullopt, "parameters");
}

void run_synthetic_step_checks(const preflight::PreflightContext& context,
                               preflight::PreflightReport& report, memory::MemoryMeter& meter,
                               std::uint64_t baseline) {
  const auto& config = context.config;
  const int world = context.world_size;
  if (!report.usable("layout.batch")) {
    const std::string why = "the batch arithmetic is wrong (see layout.batch)";
    report.add(Check::skipped(kParametersId, ExitCode::kInternal, why));
    report.add(Check::skipped(kSyntheticId, ExitCode::kResources, why));
    return;
  }
  const std::int64_t micro = config.training.micro_batch_size;
  const std::vector<std::int64_t> sizes = synthetic_micro_batches(config, world);
  auto& memory = report.memory;

  // The cap while building: what the smallest size may hold.
  const std::optional<std::int64_t> build_cap =
      tensor_allowance(context, report, sizes.front(), baseline);
  std::unique_ptr<SyntheticTraining> training;
  std::string build_error;
  if (build_cap && *build_cap <= 0) {
    build_error =
        "the memory one rank can use is taken by the fixed overhead, the dataloader "
        "queue and the checkpoint staging alone (see memory.model)";
  } else {
    try {
      training = std::make_unique<SyntheticTraining>(config, world, meter, build_cap.value_or(0));
    } catch (const ResourceError& e) {
      build_error = e.message();
    }
  }
  if (!training) {
    for (const std::int64_t m : sizes) memory.measurements.push_back({m, std::nullopt, 0});
    report.add(Check::skipped(
        kParametersId, ExitCode::kInternal,
        "the synthetic model could not be built (see " + std::string(kSyntheticId) + ")"));
    report.add(Check::fail(kSyntheticId, ExitCode::kResources,
                           "building rank 0's model and optimizer state: " + build_error,
                           suggestion(context, report, baseline)));
    return;
  }
  report.add(check_parameter_count(config, training->parameters(), training->trainable_parameters(),
                                   report));

  std::string detail;
  std::string failure;
  for (const std::int64_t m : sizes) {
    const std::optional<std::int64_t> cap = tensor_allowance(context, report, m, baseline);
    MemoryMeasurement measurement{m, std::nullopt, 0};
    if (cap && *cap <= training->state_bytes()) {
      failure = "the synthetic step at micro_batch_size " + std::to_string(m) +
                " ran out of memory: the model state alone (" +
                bytes(double(training->state_bytes())) + ") fills the " + bytes(double(*cap)) +
                " of tensors one rank can hold";
    } else {
      SyntheticStepRequest request;
      request.micro_batch_size = m;
      request.micro_steps = accumulation(config, world, m);
      request.steps = config.preflight.synthetic_steps;
      request.limit_bytes = cap.value_or(0);
      try {
        const SyntheticStepResult result = training->run(request);
        measurement.tensor_peak_bytes = static_cast<std::uint64_t>(result.peak_bytes);
        measurement.seconds = result.seconds;
        const std::uint64_t predicted =
            preflight::predict_step_memory(config, world, context.device, m).peak_bytes;
        detail += (detail.empty() ? "" : "; ") + std::string("micro_batch_size ") +
                  std::to_string(m) + ": " + bytes(double(result.peak_bytes)) +
                  " of tensors in the last of " + std::to_string(request.steps) + " steps (" +
                  std::to_string(request.micro_steps) + " micro-steps each), predicted " +
                  bytes(double(predicted)) + " (" +
                  signed_percent(double(predicted) / double(result.peak_bytes) - 1) + ")";
      } catch (const ResourceError& e) {
        if (m == micro || failure.empty()) failure = e.message();
      }
    }
    memory.measurements.push_back(measurement);
  }
  training.reset();

  const MemoryMeasurement& mine =
      *std::find_if(memory.measurements.begin(), memory.measurements.end(),
                    [&](const MemoryMeasurement& m) { return m.micro_batch_size == micro; });
  const std::uint64_t predicted_tensors =
      preflight::predict_step_memory(config, world, context.device, micro).peak_bytes;
  const std::optional<std::int64_t> cap = tensor_allowance(context, report, micro, baseline);
  const std::optional<double> threshold = cap ? std::optional<double>(double(*cap)) : std::nullopt;
  if (!mine.tensor_peak_bytes) {
    report.add(Check::fail(kSyntheticId, ExitCode::kResources,
                           failure + (detail.empty() ? "" : " (" + detail + ")"),
                           suggestion(context, report, baseline))
                   .with_numbers(double(predicted_tensors), std::nullopt, threshold, "bytes"));
    return;
  }
  const std::uint64_t extras = preflight::extras_bytes(
      preflight::memory_extras(config, world, context.device, micro, baseline));
  memory.measured_peak_bytes = *mine.tensor_peak_bytes + extras;
  const std::string message = detail + (failure.empty() ? "" : "; " + failure);
  const double deviation = double(predicted_tensors) / double(*mine.tensor_peak_bytes) - 1;
  // The budget trusts the measurement; a model this far off misleads only
  // at the sizes it extrapolates to.
  Check check = std::abs(deviation) <= kModelTolerance
                    ? Check::pass(kSyntheticId, ExitCode::kResources, message)
                    : Check::warn(kSyntheticId, ExitCode::kResources,
                                  message + "; the memory model is " + signed_percent(deviation) +
                                      " off the measurement here, which decides the budget",
                                  "nothing to do for this run; please report the configuration "
                                  "(preflight.json) so the memory model can learn it");
  report.add(check.with_numbers(double(predicted_tensors), double(*mine.tensor_peak_bytes),
                                threshold, "bytes"));
}

preflight::PreflightPlan training_preflight_plan(const config::Config& config,
                                                 std::uint64_t baseline,
                                                 const torch::Device& compute_device) {
  preflight::PreflightPlan plan;
  plan.validate_dataset = preflight::token_dataset_validator(config);
  plan.stages.push_back({"data.first_batch", [](auto& report, const auto& context) {
                           report.add(preflight::check_first_batch(context, report));
                         }});
  plan.stages.push_back({"memory.model", [baseline](auto& report, const auto& context) {
                           report.add(preflight::check_memory_model(context, report, baseline));
                         }});
  plan.stages.push_back(
      {kSyntheticId, [baseline, compute_device](auto& report, const auto& context) {
         // The synthetic step runs on the device training will use.
         const auto meter = memory::make_memory_meter(compute_device);
         run_synthetic_step_checks(context, report, *meter, baseline);
       }});
  plan.stages.push_back({"memory.budget", [baseline](auto& report, const auto& context) {
                           report.add(preflight::check_memory_budget(context, report, baseline));
                         }});
  return plan;
}

}  // namespace nss::train
