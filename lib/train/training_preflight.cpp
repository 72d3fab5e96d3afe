#include "train/training_preflight.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>

#include "config/derived.h"
#include "core/units.h"
#include "memory/memory_meter.h"
#include "model/param_spec.h"
#include "preflight/memory_checks.h"
#include "preflight/memory_model.h"
#include "preflight/model_checks.h"
#include "preflight/privacy_checks.h"
#include "preflight/token_data_checks.h"
#include "train/synthetic_step.h"

namespace nss::train {
namespace {

using preflight::Check;
using preflight::MemoryMeasurement;

constexpr const char* kSyntheticId = "memory.synthetic_step";
constexpr const char* kParametersId = "model.parameters";
constexpr const char* kPrivacyId = "privacy.budget";

// Tensor bytes one rank may hold at micro-batch `micro`: the budget less what
// the rank needs besides tensors (nullopt: no budget known, no cap).
std::optional<std::int64_t> tensor_allowance(const preflight::PreflightContext& context,
                                             std::int64_t micro) {
  const std::optional<std::uint64_t> budget = preflight::memory_budget(context);
  if (!budget) return std::nullopt;
  const std::uint64_t extras = preflight::extras_bytes(preflight::memory_extras(context, micro));
  return static_cast<std::int64_t>(*budget) - static_cast<std::int64_t>(extras);
}

// The remediation of a synthetic step that ran out of memory: the largest
// micro-batch the budget finds, from what was measured so far.
std::string out_of_memory_hint(const preflight::PreflightContext& context,
                               const preflight::MemorySummary& memory) {
  const auto decision = preflight::decide_budget(context, memory);
  if (!decision || !decision->max_micro_batch_size)
    return "no micro-batch size fits: give each rank more memory (Slurm --mem, fewer ranks per "
           "node), run more ranks, or shorten data.seq_len";
  return "set training.micro_batch_size=" + std::to_string(*decision->max_micro_batch_size) +
         " (the largest that fits, see memory.budget), give each rank more memory, or run more "
         "ranks";
}

// How far the analytic memory model may be off the synthetic step before the
// check warns (docs/preflight.md: within 0.2% at the benchmark's shapes).
constexpr double kModelTolerance = 0.10;

// Micro-steps the synthetic step runs of each optimizer step.
constexpr std::int64_t kMeasuredMicroSteps = 2;

}  // namespace

std::vector<std::int64_t> synthetic_micro_batches(const config::Config& config, int world_size) {
  const std::int64_t micro = config.training.micro_batch_size;
  std::vector<std::int64_t> sizes{micro};
  const auto choices = config::micro_batch_choices(config, world_size);
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

namespace {

// What the synthetic steps found at every size: the measurements, a line of
// detail per size that ran, and the first failure.
struct SyntheticFindings {
  std::string detail;
  std::string failure;
};

// Builds rank 0's synthetic model capped at what the smallest size may hold;
// nullptr with `error` set when it does not fit.
std::unique_ptr<SyntheticTraining> build_synthetic(const preflight::PreflightContext& context,
                                                   memory::MemoryMeter& meter,
                                                   std::int64_t smallest, std::string& error) {
  const std::optional<std::int64_t> cap = tensor_allowance(context, smallest);
  if (cap && *cap <= 0) {
    error =
        "the memory one rank can use is taken by the fixed overhead, the dataloader queue and "
        "the checkpoint staging alone (see memory.model)";
    return nullptr;
  }
  // The state's size is exact before anything is built: a model whose state
  // alone exceeds the cap is refused at once, not after filling the memory.
  const std::uint64_t state =
      preflight::predict_step_memory(context.config, context.world_size, context.device, smallest,
                                     context.packed_row_spans)
          .state_bytes;
  if (cap && state > static_cast<std::uint64_t>(*cap)) {
    error = "the model and optimizer state alone (" + format_bytes(state) + ") exceed the " +
            format_bytes(*cap) + " of tensors one rank can hold";
    return nullptr;
  }
  try {
    return std::make_unique<SyntheticTraining>(context.config, context.world_size, meter,
                                               cap.value_or(0));
  } catch (const ResourceError& e) {
    error = e.message();
    return nullptr;
  }
}

// What micro-batches beyond the measured ones add to a step's peak: each
// holds its batch tensors from the step's start (the target count is
// all-reduced before the first backward), which the memory model counts
// exactly; their compute repeats the measured ones' memory.
std::uint64_t unmeasured_micro_batch_bytes(const preflight::PreflightContext& context,
                                           std::int64_t m, std::int64_t measured) {
  config::Config shorter = context.config;
  shorter.training.global_batch_size = m * context.world_size * measured;
  const auto peak = [&](const config::Config& config) {
    return preflight::predict_step_memory(config, context.world_size, context.device, m,
                                          context.packed_row_spans)
        .peak_bytes;
  };
  const std::uint64_t all = peak(context.config), part = peak(shorter);
  return all > part ? all - part : 0;
}

// Runs the synthetic steps at micro-batch `m` under its cap.
preflight::MemoryMeasurement measure(const preflight::PreflightContext& context,
                                     SyntheticTraining& training, std::int64_t m,
                                     SyntheticFindings& findings) {
  const auto& config = context.config;
  preflight::MemoryMeasurement measurement{m, std::nullopt, 0};
  const std::optional<std::int64_t> cap = tensor_allowance(context, m);
  if (cap && *cap <= training.state_bytes()) {
    findings.failure = "the synthetic step at micro_batch_size " + std::to_string(m) +
                       " ran out of memory: the model state alone (" +
                       format_bytes(training.state_bytes()) + ") fills the " + format_bytes(*cap) +
                       " of tensors one rank can hold";
    return measurement;
  }
  SyntheticStepRequest request;
  request.micro_batch_size = m;
  // Micro-steps after the second repeat its compute memory (gradients
  // accumulate in place): measuring two bounds the preflight's time, and the
  // batch tensors the others hold are added from the memory model. A private
  // step reads its micro-batches one at a time and may run any number of
  // them (a Poisson batch's size varies): its memory is that of two.
  const std::int64_t accumulation = config.privacy.enabled
                                        ? kMeasuredMicroSteps
                                        : config::accumulation_steps(config, context.world_size, m);
  request.micro_steps = std::min<std::int64_t>(accumulation, kMeasuredMicroSteps);
  const std::uint64_t unmeasured =
      accumulation > request.micro_steps
          ? unmeasured_micro_batch_bytes(context, m, request.micro_steps)
          : 0;
  if (cap && training.state_bytes() + static_cast<std::int64_t>(unmeasured) >= *cap) {
    if (m != config.training.micro_batch_size && !findings.failure.empty()) return measurement;
    findings.failure = "the synthetic step at micro_batch_size " + std::to_string(m) +
                       " ran out of memory: the batch tensors of its " +
                       std::to_string(accumulation) + " micro-batches (" +
                       format_bytes(unmeasured) + ") and the model state fill the " +
                       format_bytes(*cap) + " of tensors one rank can hold";
    return measurement;
  }
  request.steps = config.preflight.synthetic_steps;
  request.limit_bytes = cap.value_or(0);
  request.packed_row_spans = context.packed_row_spans;
  try {
    const SyntheticStepResult result = training.run(request);
    const std::uint64_t peak = static_cast<std::uint64_t>(result.peak_bytes) + unmeasured;
    measurement.tensor_peak_bytes = peak;
    measurement.seconds = result.seconds;
    const std::uint64_t predicted =
        preflight::predict_step_memory(config, context.world_size, context.device, m,
                                       context.packed_row_spans)
            .peak_bytes;
    findings.detail += (findings.detail.empty() ? "" : "; ") + std::string("micro_batch_size ") +
                       std::to_string(m) + ": " + format_bytes(peak) +
                       " of tensors in the last of " + std::to_string(request.steps) + " steps (" +
                       std::to_string(request.micro_steps) +
                       (unmeasured > 0 || accumulation > request.micro_steps
                            ? " of " + std::to_string(accumulation) +
                                  " micro-steps each computed, the others' batch tensors (" +
                                  format_bytes(unmeasured) + ") from the memory model"
                            : std::string(" micro-steps each")) +
                       "), predicted " + format_bytes(predicted) + " (" +
                       format_percent(double(predicted) / double(peak) - 1, 1, true) + ")";
  } catch (const ResourceError& e) {
    if (m == config.training.micro_batch_size || findings.failure.empty())
      findings.failure = e.message();
  }
  return measurement;
}

// "memory.synthetic_step" from the configured size's measurement: a fail when
// it ran out, a warning when the analytic model is far off it.
preflight::Check synthetic_step_check(const preflight::PreflightContext& context,
                                      preflight::MemorySummary& memory,
                                      const SyntheticFindings& findings) {
  const std::int64_t micro = context.config.training.micro_batch_size;
  const preflight::MemoryMeasurement& mine =
      *std::find_if(memory.measurements.begin(), memory.measurements.end(),
                    [&](const MemoryMeasurement& m) { return m.micro_batch_size == micro; });
  const std::uint64_t predicted =
      preflight::predict_step_memory(context.config, context.world_size, context.device, micro,
                                     context.packed_row_spans)
          .peak_bytes;
  const std::optional<std::int64_t> cap = tensor_allowance(context, micro);
  const std::optional<double> threshold = cap ? std::optional<double>(double(*cap)) : std::nullopt;
  if (!mine.tensor_peak_bytes)
    return Check::fail(
               kSyntheticId, ExitCode::kResources,
               findings.failure + (findings.detail.empty() ? "" : " (" + findings.detail + ")"),
               out_of_memory_hint(context, memory))
        .with_numbers(double(predicted), std::nullopt, threshold, "bytes");
  memory.measured_peak_bytes =
      *mine.tensor_peak_bytes + preflight::extras_bytes(preflight::memory_extras(context, micro));
  const std::string message =
      findings.detail + (findings.failure.empty() ? "" : "; " + findings.failure);
  const double deviation = double(predicted) / double(*mine.tensor_peak_bytes) - 1;
  // The budget trusts the measurement; a model this far off misleads only
  // at the sizes it extrapolates to.
  Check check =
      std::abs(deviation) <= kModelTolerance
          ? Check::pass(kSyntheticId, ExitCode::kResources, message)
          : Check::warn(kSyntheticId, ExitCode::kResources,
                        message + "; the memory model is " + format_percent(deviation, 1, true) +
                            " off the measurement here, which decides the budget",
                        "nothing to do for this run; please report the configuration "
                        "(preflight.json) so the memory model can learn it");
  return check.with_numbers(double(predicted), double(*mine.tensor_peak_bytes), threshold, "bytes");
}

// A private step at the batch its sampling exceeds with probability 1e-6
// (report.privacy): the micro-batch is fixed, so its memory is the measured
// steps'; its time (the last of two steps) is what privacy.budget reports.
void time_privacy_bound_step(const preflight::PreflightContext& context,
                             SyntheticTraining& training, const MemoryMeasurement& configured,
                             preflight::PrivacySummary& privacy) {
  if (!privacy.plan || !configured.tensor_peak_bytes) return;
  SyntheticStepRequest request;
  request.micro_batch_size = configured.micro_batch_size;
  request.micro_steps = privacy.micro_steps_bound;
  request.limit_bytes = tensor_allowance(context, request.micro_batch_size).value_or(0);
  request.packed_row_spans = context.packed_row_spans;
  try {
    privacy.bound_step_seconds = training.run(request).step_seconds.back();
  } catch (const ResourceError&) {
    // Left unmeasured: memory.synthetic_step reports what does not fit.
  }
}

}  // namespace

void run_synthetic_step_checks(const preflight::PreflightContext& context,
                               preflight::PreflightReport& report, memory::MemoryMeter& meter) {
  const auto& config = context.config;
  if (!report.usable("layout.batch")) {
    const std::string why = "the batch arithmetic is wrong (see layout.batch)";
    report.add(Check::skipped(kParametersId, ExitCode::kInternal, why));
    report.add(Check::skipped(kSyntheticId, ExitCode::kResources, why));
    return;
  }
  const std::vector<std::int64_t> sizes = synthetic_micro_batches(config, context.world_size);
  auto& memory = report.memory;
  std::string build_error;
  std::unique_ptr<SyntheticTraining> training =
      build_synthetic(context, meter, sizes.front(), build_error);
  if (!training) {
    for (const std::int64_t m : sizes) memory.measurements.push_back({m, std::nullopt, 0});
    report.add(Check::skipped(
        kParametersId, ExitCode::kInternal,
        "the synthetic model could not be built (see " + std::string(kSyntheticId) + ")"));
    report.add(Check::fail(kSyntheticId, ExitCode::kResources,
                           "building rank 0's model and optimizer state: " + build_error,
                           out_of_memory_hint(context, memory)));
    return;
  }
  report.add(check_parameter_count(config, training->parameters(), training->trainable_parameters(),
                                   report));
  SyntheticFindings findings;
  for (const std::int64_t m : sizes)
    memory.measurements.push_back(measure(context, *training, m, findings));
  const auto configured = std::find_if(
      memory.measurements.begin(), memory.measurements.end(), [&](const MemoryMeasurement& m) {
        return m.micro_batch_size == config.training.micro_batch_size;
      });
  if (report.privacy && configured != memory.measurements.end())
    time_privacy_bound_step(context, *training, *configured, *report.privacy);
  training.reset();
  report.add(synthetic_step_check(context, memory, findings));
}

preflight::PreflightPlan training_preflight_plan(const config::Config& config,
                                                 const torch::Device& compute_device) {
  preflight::PreflightPlan plan;
  plan.validate_dataset = preflight::token_dataset_validator(config);
  plan.stages.push_back({"model.pretrained", [](auto& report, const auto& context) {
                           report.add(preflight::check_pretrained_model(context));
                         }});
  plan.stages.push_back({"data.first_batch", [](auto& report, const auto& context) {
                           report.add(preflight::check_first_batch(context, report));
                         }});
  // The privacy plan before the memory: the synthetic step times a step at
  // its batch bound, and the check that reports it comes last.
  plan.stages.push_back({kPrivacyId, [](auto& report, const auto& context) {
                           report.privacy = preflight::plan_privacy_summary(context, report);
                         }});
  plan.stages.push_back({"memory.model", [](auto& report, const auto& context) {
                           report.add(preflight::check_memory_model(context, report));
                         }});
  plan.stages.push_back({kSyntheticId, [compute_device](auto& report, const auto& context) {
                           // The synthetic step runs on the device training will use.
                           const auto meter = memory::make_memory_meter(compute_device);
                           run_synthetic_step_checks(context, report, *meter);
                         }});
  plan.stages.push_back({"memory.budget", [](auto& report, const auto& context) {
                           report.add(preflight::check_memory_budget(context, report));
                         }});
  plan.stages.push_back({kPrivacyId, [](auto& report, const auto& context) {
                           if (report.find(kPrivacyId)) return;  // the plan's stage failed
                           report.add(preflight::check_privacy_budget(context, report));
                         }});
  return plan;
}

}  // namespace nss::train
