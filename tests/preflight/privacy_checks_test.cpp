// The privacy preflight: "privacy.budget" passes with the plan's figures,
// warns on few privacy units and on shuffled batches, fails (exit 2) on an
// unreachable target, a given sigma that overspends it and a sigma above 100,
// and is skipped when privacy is off or the data unusable; preflight.json's
// "privacy" object; layout.batch under Poisson sampling claims no fixed
// accumulation.
#include "preflight/privacy_checks.h"

#include <gtest/gtest.h>

#include "config/derived.h"
#include "config/load.h"
#include "data/poisson_plan.h"
#include "data/token_file_writer.h"
#include "preflight/layout_checks.h"
#include "preflight/report_output.h"
#include "privacy/poisson_sampler.h"
#include "support/test_paths.h"

namespace nss::preflight {
namespace {

// `documents` documents of 5 to 40 tokens (the longest 40).
std::string token_file(std::int64_t documents) {
  const std::string path =
      nss::testing::scratch_dir("privacy_checks") + "/docs_" + std::to_string(documents) + ".h5";
  std::vector<std::int64_t> lengths;
  std::int64_t total = 0;
  for (std::int64_t d = 0; d < documents; ++d) {
    lengths.push_back(5 + (d * 7) % 36);
    total += lengths.back();
  }
  data::TokenFileWriter writer(path, DType::kUInt16, total);
  for (const std::int64_t length : lengths) {
    std::vector<std::int64_t> tokens(static_cast<std::size_t>(length), 3);
    writer.append(tokens.data(), length);
    writer.end_document();
  }
  writer.commit({});
  return path;
}

// `privacy`: the privacy section's fields besides enabled.
config::Config private_config(std::int64_t documents,
                              const std::string& privacy = "target_epsilon: 8",
                              std::int64_t micro_batch_size = 3) {
  config::Config config = config::parse_config_text(
      R"(
model: {preset: tiny, hidden_size: 32, intermediate_size: 64, num_hidden_layers: 2,
        num_attention_heads: 4, num_key_value_heads: 2, head_dim: 8, vocab_size: 300}
data: {seq_len: 32, packing: none}
training: {global_batch_size: 20, max_steps: 10, lora: {enabled: true}, micro_batch_size: )" +
          std::to_string(micro_batch_size) + "}\nprivacy: {enabled: true, " + privacy + "}\n",
      "test");
  config.data.path = token_file(documents);
  return config;
}

struct Outcome {
  PreflightReport report{"cpu"};
  Check check;
};

Outcome run_check(const config::Config& config, int world_size = 2) {
  Outcome out;
  const PreflightContext context{config, world_size, DeviceKind::kCpu, {}, 0, {}};
  out.report.add(Check::pass("data.format", ExitCode::kData, "ok"));
  out.report.privacy = plan_privacy_summary(context, out.report);
  out.check = check_privacy_budget(context, out.report);
  return out;
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(PrivacyBudgetCheck, PassesWithThePlanTheBatchesAndTheExamples) {
  const config::Config config = private_config(2000);
  Outcome out = run_check(config);
  ASSERT_EQ(out.check.status, CheckStatus::kPass) << out.check.message;
  ASSERT_TRUE(out.report.privacy && out.report.privacy->plan);
  const PrivacySummary& p = *out.report.privacy;
  EXPECT_EQ(p.plan->units, 2000);
  EXPECT_DOUBLE_EQ(p.plan->sampling_rate, 0.01);
  EXPECT_TRUE(p.plan->calibrated);
  EXPECT_LE(p.epsilon, 8.0);
  EXPECT_GT(p.epsilon, 7.9);
  EXPECT_EQ(p.batch_bound, privacy::poisson_batch_bound(2000, 0.01, 1e-6));
  EXPECT_GT(p.batch_bound, 20);
  EXPECT_EQ(p.micro_steps_expected, 4);  // ceil(ceil(20 / 2) / 3)
  EXPECT_EQ(p.micro_steps_bound,
            data::poisson_micro_steps(p.batch_bound, 2, config.training.micro_batch_size));
  EXPECT_EQ(p.examples.longest_example, 40);
  EXPECT_GT(p.examples.truncated_examples, 0);  // 34 to 40 tokens exceed seq_len + 1 = 33
  EXPECT_DOUBLE_EQ(*out.check.predicted, p.epsilon);
  EXPECT_DOUBLE_EQ(*out.check.threshold, 8.0);
  for (const char* part : {"2000 privacy units", "q = 0.01", "calibrated to privacy.target_epsilon",
                           "auto: 1/n^1.2", "prv accountant", "10 steps spend epsilon",
                           "with probability 1e-6", "was not measured", "longest 40 tokens"})
    EXPECT_TRUE(has(out.check.message, part)) << part << " in " << out.check.message;

  out.report.privacy->bound_step_seconds = 0.25;
  const Check timed = check_privacy_budget({config, 2, DeviceKind::kCpu, {}, 0, {}}, out.report);
  EXPECT_TRUE(has(timed.message,
                  "a step at the 1e-6 batch bound (B = " + std::to_string(p.batch_bound) + ", " +
                      std::to_string(p.micro_steps_bound) + " micro-steps per rank) took 0.25 s"))
      << timed.message;
}

TEST(PrivacyBudgetCheck, PreflightJsonHasThePrivacyObject) {
  Outcome out = run_check(private_config(2000));
  out.report.privacy->bound_step_seconds = 0.5;
  const auto json = report_to_json(out.report, out.report.verdict(false), 2, 0.1, {});
  const auto& p = json["privacy"];
  for (const char* key :
       {"units", "sampling_rate", "noise_multiplier", "calibrated", "max_grad_norm", "delta",
        "accountant", "sampling", "planned_steps", "epsilon", "expected_batch", "batch_bound_1e6",
        "micro_steps_expected", "micro_steps_bound", "bound_step_seconds", "longest_example",
        "truncated_examples", "padding_share"})
    EXPECT_TRUE(p.contains(key)) << key;
  EXPECT_EQ(p["units"], 2000);
  EXPECT_EQ(p["accountant"], "prv");
  EXPECT_EQ(p["sampling"], "poisson");
  EXPECT_EQ(p["batch_bound_1e6"], out.report.privacy->batch_bound);
  EXPECT_GE(p["batch_bound_1e6"].get<double>(), p["expected_batch"].get<double>());
  EXPECT_EQ(p["bound_step_seconds"], 0.5);
  EXPECT_FALSE(p.contains("key") || p.contains("privacy_key"));
  EXPECT_TRUE(report_to_json(PreflightReport("cpu"), {}, 1, 0, {})["privacy"].is_null());
}

TEST(PrivacyBudgetCheck, WarnsWhenThePrivacyUnitsAreFew) {
  const Outcome out = run_check(private_config(300));
  EXPECT_EQ(out.check.status, CheckStatus::kWarn) << out.check.message;
  EXPECT_EQ(out.check.code, ExitCode::kUsage);
  EXPECT_TRUE(has(out.check.message, "only 300 privacy units")) << out.check.message;
  EXPECT_TRUE(has(out.check.message, "noise")) << out.check.message;
  EXPECT_TRUE(has(out.check.remediation, "more examples")) << out.check.remediation;
  EXPECT_TRUE(has(out.check.remediation, "privacy.target_epsilon")) << out.check.remediation;
}

TEST(PrivacyBudgetCheck, WarnsThatShuffledBatchesAreNotWhatTheEpsilonAssumes) {
  const Outcome out = run_check(private_config(2000, "target_epsilon: 8, sampling: shuffle", 2));
  EXPECT_EQ(out.check.status, CheckStatus::kWarn) << out.check.message;
  EXPECT_TRUE(has(out.check.message, "assumes Poisson sampling")) << out.check.message;
  EXPECT_TRUE(has(out.check.remediation, "privacy.sampling: poisson")) << out.check.remediation;
  // Fixed batches: the bound is the batch, the micro-steps the accumulation.
  EXPECT_EQ(out.report.privacy->batch_bound, 20);
  EXPECT_EQ(out.report.privacy->micro_steps_bound, 5);  // 20 / (2 x 2)
}

TEST(PrivacyBudgetCheck, FailsWhenTheTargetIsOutOfReach) {
  const Outcome out = run_check(private_config(2000, "target_epsilon: 0.001"));
  EXPECT_EQ(out.check.status, CheckStatus::kFail);
  EXPECT_EQ(out.check.code, ExitCode::kUsage);
  EXPECT_TRUE(has(out.check.message, "out of reach")) << out.check.message;
  EXPECT_FALSE(out.check.remediation.empty());
  EXPECT_FALSE(out.report.privacy->plan);
}

TEST(PrivacyBudgetCheck, FailsWhenAGivenSigmaSpendsMoreThanTheTarget) {
  const Outcome out = run_check(private_config(2000, "noise_multiplier: 0.3, target_epsilon: 1"));
  EXPECT_EQ(out.check.status, CheckStatus::kFail) << out.check.message;
  EXPECT_EQ(out.check.code, ExitCode::kUsage);
  EXPECT_GT(out.report.privacy->epsilon, 1.0);
  EXPECT_TRUE(has(out.check.message, "more than privacy.target_epsilon 1")) << out.check.message;
  EXPECT_TRUE(has(out.check.remediation, "set privacy.noise_multiplier to at least"))
      << out.check.remediation;
  // Without a target a given sigma spends what it spends.
  const Outcome free = run_check(private_config(2000, "noise_multiplier: 0.8, target_epsilon: 0"));
  EXPECT_EQ(free.check.status, CheckStatus::kPass) << free.check.message;
  EXPECT_TRUE(has(free.check.message, "given (privacy.noise_multiplier)")) << free.check.message;
}

TEST(PrivacyBudgetCheck, FailsWhenSigmaExceedsTheSaneBound) {
  const Outcome out = run_check(private_config(2000, "noise_multiplier: 200, target_epsilon: 0"));
  EXPECT_EQ(out.check.status, CheckStatus::kFail) << out.check.message;
  EXPECT_EQ(out.check.code, ExitCode::kUsage);
  EXPECT_TRUE(has(out.check.message, "exceeds 100")) << out.check.message;
}

TEST(PrivacyBudgetCheck, IsSkippedWhenPrivacyIsOffOrTheDataUnusable) {
  config::Config config = private_config(2000);
  config.privacy.enabled = false;
  EXPECT_EQ(run_check(config).check.status, CheckStatus::kSkipped);
  EXPECT_FALSE(run_check(config).report.privacy);
  config.privacy.enabled = true;
  const PreflightContext context{config, 2, DeviceKind::kCpu, {}, 0, {}};
  PreflightReport report("cpu");
  report.add(Check::fail("data.format", ExitCode::kData, "bad", "fix"));
  report.privacy = plan_privacy_summary(context, report);
  EXPECT_FALSE(report.privacy);
  const Check check = check_privacy_budget(context, report);
  EXPECT_EQ(check.status, CheckStatus::kSkipped);
  EXPECT_TRUE(has(check.message, "data.format")) << check.message;
}

TEST(PrivacyBudgetCheck, PoissonLayoutClaimsNoFixedAccumulation) {
  config::Config config = private_config(2000);
  config.training.global_batch_size = 13;  // Poisson: need not divide
  const Check check = check_batch_layout(config, 2);
  EXPECT_EQ(check.status, CheckStatus::kPass) << check.message;
  EXPECT_FALSE(has(check.message, "accumulation")) << check.message;
  EXPECT_TRUE(has(check.message, "expected batch")) << check.message;
  EXPECT_TRUE(has(check.message, "3 at the expected batch")) << check.message;  // ceil(7 / 3)
  EXPECT_TRUE(has(check.message, "privacy.budget")) << check.message;
  EXPECT_EQ(data::poisson_micro_steps(0, 2, config.training.micro_batch_size),
            1);  // an empty batch still steps
  EXPECT_EQ(data::poisson_micro_steps(37, 2, config.training.micro_batch_size), 7);
}

}  // namespace
}  // namespace nss::preflight
