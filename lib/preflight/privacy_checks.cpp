#include "preflight/privacy_checks.h"

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "config/derived.h"
#include "core/deadline.h"
#include "data/poisson_plan.h"
#include "data/token_dataset.h"
#include "privacy/accountant.h"
#include "privacy/poisson_sampler.h"

namespace nss::preflight {
namespace {

constexpr const char* kId = "privacy.budget";

std::string number(double value, const char* format = "%.4g") {
  char text[48];
  std::snprintf(text, sizeof text, format, value);
  return text;
}

// kPrivacyBatchTail as "1e-6".
std::string tail_text() {
  return "1e" + std::to_string(static_cast<int>(std::lround(std::log10(kPrivacyBatchTail))));
}

// n, q and the batches in micro-steps per rank.
std::string batch_text(const config::Config& config, int world_size, const PrivacySummary& p) {
  const privacy::PrivacyPlan& plan = *p.plan;
  const std::string per_rank = " micro-steps of " +
                               std::to_string(config.training.micro_batch_size) + " per rank at " +
                               config::data_parallel_ranks_text(config, world_size);
  std::string text = std::to_string(plan.units) +
                     " privacy units (documents), q = " + number(plan.sampling_rate) + ": ";
  if (!plan.poisson)
    return text + "fixed batches of " + std::to_string(p.batch_bound) +
           " (privacy.sampling shuffle), " + std::to_string(p.micro_steps_bound) + per_rank;
  return text + "Poisson batches of " + number(plan.expected_batch) + " expected, more than " +
         std::to_string(p.batch_bound) + " with probability " + tail_text() + " (" +
         std::to_string(p.micro_steps_expected) + " and " + std::to_string(p.micro_steps_bound) +
         per_rank + ")";
}

// sigma, C, delta, the accountant and what the planned steps spend.
std::string budget_text(const config::Config& config, const PrivacySummary& p) {
  const privacy::PrivacyPlan& plan = *p.plan;
  return "sigma = " + number(plan.noise_multiplier) +
         (plan.calibrated
              ? " calibrated to privacy.target_epsilon " + number(config.privacy.target_epsilon)
              : std::string(" given (privacy.noise_multiplier)")) +
         ", C = " + number(plan.max_grad_norm) + ", delta = " + number(plan.delta, "%.3g") +
         (config.privacy.delta.value ? " given" : " (auto: 1/n^1.2)") + ", " +
         privacy::accountant_kind_name(plan.accountant) +
         " accountant: " + std::to_string(plan.planned_steps) + " steps spend epsilon " +
         number(p.epsilon);
}

std::string bound_step_text(const PrivacySummary& p) {
  const std::string step = (p.plan->poisson ? "a step at the " + tail_text() + " batch bound"
                                            : std::string("a step of the fixed batch")) +
                           " (B = " + std::to_string(p.batch_bound) + ", " +
                           std::to_string(p.micro_steps_bound) + " micro-steps per rank)";
  if (!p.bound_step_seconds) return step + " was not measured (see memory.synthetic_step)";
  return step + " took " + number(*p.bound_step_seconds, "%.3g") + " s (synthetic step)";
}

std::string examples_text(const config::Config& config, const data::ExampleStatistics& e) {
  std::string text = "examples: longest " + std::to_string(e.longest_example) + " tokens, " +
                     std::to_string(e.truncated_examples) +
                     " truncated to seq_len+1 = " + std::to_string(config.data.seq_len + 1) +
                     " tokens";
  if (e.truncated_examples > 0)
    text += " (losing " + std::to_string(e.truncated_tokens) + " tokens)";
  return text + ", padding " + number(100 * e.padding_share, "%.1f") + "% of the inputs";
}

// What to change when a given sigma spends more than the target: the sigma
// the plan would calibrate instead (privacy::plan_privacy decides it).
std::string overspend_remediation(const config::Config& config, const PrivacySummary& p) {
  config::Config calibrated = config;
  calibrated.privacy.noise_multiplier = 0;
  const std::string other =
      "lower training.max_steps, or raise privacy.target_epsilon to at least " + number(p.epsilon);
  try {
    const double sigma = privacy::plan_privacy(calibrated, p.plan->units).noise_multiplier;
    return "set privacy.noise_multiplier to at least " + number(sigma) +
           " (or 0: calibrated to privacy.target_epsilon), " + other;
  } catch (const UsageError&) {
    return other + " (no sigma up to " +
           number(privacy::CalibrationOptions{}.max_noise_multiplier) +
           " meets the target in these steps)";
  }
}

}  // namespace

std::optional<PrivacySummary> plan_privacy_summary(const PreflightContext& context,
                                                   const PreflightReport& report) {
  const config::Config& config = context.config;
  if (!config.privacy.enabled || !report.usable("data.format")) return std::nullopt;
  const double deadline = config.preflight.first_batch_timeout_s;
  // By value: after a timeout the read outlives this frame (and is abandoned).
  const auto examples = call_with_deadline(deadline, [config] {
    return data::example_statistics(*data::TokenDataset::open(config.data.path),
                                    config.data.seq_len);
  });
  if (!examples)
    throw DataError("preflight",
                    "reading the documents of " + config.data.path + " did not finish within " +
                        number(deadline, "%g") + " s (preflight.first_batch_timeout_s)",
                    "check the file system holding data.path, or raise "
                    "preflight.first_batch_timeout_s if it is only slow");
  PrivacySummary summary;
  summary.examples = *examples;
  try {
    summary.plan = privacy::plan_privacy(config, summary.examples.examples);
    summary.epsilon = summary.plan->epsilon_after(summary.plan->planned_steps);
  } catch (const Error& e) {
    summary.plan.reset();
    summary.error = "[" + e.component() + "] " + e.message();
    summary.error_hint = e.hint();
    summary.error_code = e.code();
    return summary;
  }
  const privacy::PrivacyPlan& plan = *summary.plan;
  if (plan.poisson) {
    summary.batch_bound =
        privacy::poisson_batch_bound(plan.units, plan.sampling_rate, kPrivacyBatchTail);
    const auto expected = static_cast<std::int64_t>(std::ceil(plan.expected_batch));
    // The ranks of a tensor group read the same micro-batches.
    const int readers = config::data_parallel_ranks(config, context.world_size);
    summary.micro_steps_expected =
        data::poisson_micro_steps(expected, readers, config.training.micro_batch_size);
    summary.micro_steps_bound =
        data::poisson_micro_steps(summary.batch_bound, readers, config.training.micro_batch_size);
  } else {
    summary.batch_bound = config.training.global_batch_size;  // every batch has this size
    summary.micro_steps_expected = config::accumulation_steps(config, context.world_size);
    summary.micro_steps_bound = summary.micro_steps_expected;
  }
  return summary;
}

Check check_privacy_budget(const PreflightContext& context, const PreflightReport& report) {
  const config::Config& config = context.config;
  if (!config.privacy.enabled)
    return Check::skipped(kId, ExitCode::kUsage, "privacy.enabled is false");
  if (!report.privacy)
    return Check::skipped(kId, ExitCode::kUsage,
                          "data.path is not a usable token dataset (see data.open, data.format)");
  const PrivacySummary& p = *report.privacy;
  if (!p.plan) return Check::fail(kId, p.error_code, p.error, p.error_hint);
  const privacy::PrivacyPlan& plan = *p.plan;
  const double target = config.privacy.target_epsilon;
  const std::optional<double> threshold = target > 0 ? std::optional<double>(target) : std::nullopt;
  const std::string facts = batch_text(config, context.world_size, p) + "; " +
                            budget_text(config, p) + "; " + bound_step_text(p) + "; " +
                            examples_text(config, p.examples);
  const auto numbered = [&](Check check) {
    return check.with_numbers(p.epsilon, std::nullopt, threshold, "epsilon");
  };

  const double max_sigma = privacy::CalibrationOptions{}.max_noise_multiplier;
  if (plan.noise_multiplier > max_sigma)
    return numbered(Check::fail(
        kId, ExitCode::kUsage,
        "sigma " + number(plan.noise_multiplier) + " exceeds " + number(max_sigma) +
            ": noise of sigma x C per element would drown the clipped gradients; " + facts,
        "set privacy.noise_multiplier to at most " + number(max_sigma) +
            ", or to 0 to calibrate it to privacy.target_epsilon"));
  if (!plan.calibrated && target > 0 && p.epsilon > target)
    return numbered(Check::fail(
        kId, ExitCode::kUsage,
        "privacy.noise_multiplier " + number(plan.noise_multiplier) + " spends epsilon " +
            number(p.epsilon) + " in " + std::to_string(plan.planned_steps) +
            " steps, more than privacy.target_epsilon " + number(target) + "; " + facts,
        overspend_remediation(config, p)));

  std::vector<std::string> concerns, remedies;
  if (plan.units < kFewPrivacyUnits) {
    concerns.push_back("only " + std::to_string(plan.units) +
                       " privacy units: with few examples the noise " +
                       "(sigma x C per element) is large against the summed clipped gradients, " +
                       "so private training costs much of the model's utility");
    remedies.push_back("train on more examples (at least " + std::to_string(kFewPrivacyUnits) +
                       " documents), or accept a larger privacy.target_epsilon");
  }
  if (!plan.poisson) {
    concerns.push_back(
        "privacy.sampling shuffle draws fixed-size batches, but the epsilon reported assumes "
        "Poisson sampling: it is not a proven guarantee for this run");
    remedies.push_back("set privacy.sampling: poisson for the guarantee the accountant states");
  }
  if (concerns.empty()) return numbered(Check::pass(kId, ExitCode::kUsage, facts));
  std::string message, remediation;
  for (std::size_t i = 0; i < concerns.size(); ++i) {
    message += concerns[i] + "; ";
    remediation += (i == 0 ? "" : "; ") + remedies[i];
  }
  return numbered(Check::warn(kId, ExitCode::kUsage, message + facts, remediation));
}

}  // namespace nss::preflight
