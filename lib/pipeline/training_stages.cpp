// The preflight and the fine-tune: nss_hpc's job (train::run_job) on every
// rank, with the configuration the pipeline resolved (<run>/training.yaml).
// The preflight stage checks that the sampling limit holds the prepared
// records, then runs the job up to its verdict; the fine-tune then
// runs it without a second preflight, resuming from the last checkpoint
// when there is one. A private run's guarantee is written beside the
// pipeline's other outputs (privacy.json).
#include <filesystem>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "checkpoint/index.h"
#include "checkpoint/step_directory.h"
#include "checkpoint/trained_model.h"
#include "comm/agreement.h"
#include "core/output_location.h"
#include "core/sha256.h"
#include "pipeline/record_length_check.h"
#include "pipeline/stages.h"
#include "privacy/privacy_report.h"
#include "train/job.h"

namespace nss::pipeline {
namespace {

std::string preflight_report(const StageContext& context) {
  return context.paths.training_run() + "/preflight.json";
}

class PreflightStage : public Stage {
 public:
  const char* name() const override { return "preflight"; }
  bool on_every_rank() const override { return true; }
  bool enabled(const StageContext& context) const override {
    return context.config.preflight.enabled;
  }

  // The allocation is an input: a requeued job on other hosts checks them.
  std::map<std::string, std::string> inputs(const StageContext& context) const override {
    return {{"tokens", recorded_output(context, "prepare", "tokens").sha256},
            {"training_config", sha256_file_hex(context.training_config)},
            {"ranks", sha256_hex(context.hosts)}};
  }

  void check_can_run(const StageContext& context) const override { check_record_length(context); }

  StageResult run(const StageContext& context) override {
    train::JobOptions job;
    job.config_path = context.training_config;
    job.preflight_only = true;
    StageResult result;
    result.code = train::run_job(job);
    if (context.world.rank() == 0)
      result.outputs["report"] = output_file(preflight_report(context));
    return result;
  }
};

// A private run's privacy.json, as nss_consolidate writes it beside an export.
void write_guarantee(const StageContext& context, const std::string& step_dir,
                     StageResult& result) {
  const auto index = checkpoint::read_index(step_dir);
  const auto plan = checkpoint::privacy_settings(index);
  if (plan.is_null()) return;
  const auto report =
      privacy::privacy_report(plan, index.step, checkpoint::training_dataset(index));
  write_output_file(
      {context.paths.privacy_report(), "pipeline", "run.output_dir", ExistingOutput::kReplaceFile},
      report.dump(2) + "\n");
  result.outputs["privacy"] = output_file(context.paths.privacy_report());
  result.facts["epsilon"] = report.value("epsilon", nlohmann::json());
  result.facts["delta"] = report.value("delta", nlohmann::json());
}

class TrainingStage : public Stage {
 public:
  const char* name() const override { return "train"; }
  bool on_every_rank() const override { return true; }

  std::map<std::string, std::string> inputs(const StageContext& context) const override {
    return {{"tokens", recorded_output(context, "prepare", "tokens").sha256},
            {"training_config", sha256_file_hex(context.training_config)}};
  }

  StageResult run(const StageContext& context) override {
    train::JobOptions job;
    job.config_path = context.training_config;
    job.preflight_done = context.config.preflight.enabled;  // the preflight stage said go
    StageResult result;
    result.code = train::run_job(job);
    if (result.code != ExitCode::kOk) return result;
    comm::run_on_root(context.world, 0, [&] {
      const std::int64_t step = context.config.training.max_steps;
      const std::string step_dir = checkpoint::step_dir_path(context.checkpoint_dir, step);
      result.outputs["step"] = output_file(step_dir + "/metadata.json");
      result.facts["step"] = step;
      result.facts["step_dir"] = step_dir;
      write_guarantee(context, step_dir, result);
    });
    return result;
  }
};

}  // namespace

std::unique_ptr<Stage> make_preflight_stage() {
  return std::make_unique<PreflightStage>();
}
std::unique_ptr<Stage> make_training_stage() {
  return std::make_unique<TrainingStage>();
}

}  // namespace nss::pipeline
