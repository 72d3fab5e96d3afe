// Synthetic records from the fine-tuned step: nss_generate --records on
// every rank (generate::run_generation, the same library call), into
// <run>/synthetic. A run the ledger did not see complete is started again
// from nothing: its directory is the pipeline's own.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "comm/agreement.h"
#include "core/fs.h"
#include "core/sha256.h"
#include "generate/generation_job.h"
#include "pipeline/record_length_check.h"
#include "pipeline/stages.h"

namespace nss::pipeline {
namespace {

generate::GenerationJob sampling_job(const StageContext& context, const std::string& step_dir) {
  const auto& p = context.config.pipeline;
  generate::GenerationJob job;
  job.model.path = step_dir;
  job.output = context.paths.synthetic();
  job.request.max_new_tokens = p.max_new_tokens;
  job.request.batch_size = p.batch_size;
  job.request.sampling.temperature = p.temperature;
  job.request.sampling.top_k = p.top_k;
  job.request.sampling.top_p = p.top_p;
  job.request.sampling.seed = static_cast<std::uint64_t>(context.config.run.seed);
  job.records.wanted = p.records;
  job.records.invalid_fraction_threshold = p.invalid_fraction_threshold;
  job.records.patience = p.patience;
  job.records.constrain = config::choice_name(p.constrain);
  job.records_given = true;
  job.names = {"pipeline.max_new_tokens", "pipeline.temperature",
               "pipeline.invalid_fraction_threshold", "pipeline.patience", "training.max_steps"};
  return job;
}

std::string settings_text(const generate::GenerationJob& job) {
  const auto& s = job.request.sampling;
  return fmt::format(
      "records={}\nmax_new_tokens={}\nbatch_size={}\ntemperature={}\ntop_k={}\ntop_p={}\n"
      "seed={}\ninvalid_fraction_threshold={}\npatience={}\nconstrain={}\n",
      job.records.wanted, job.request.max_new_tokens, job.request.batch_size, s.temperature,
      s.top_k, s.top_p, s.seed, job.records.invalid_fraction_threshold, job.records.patience,
      job.records.constrain);
}

class SamplingStage : public Stage {
 public:
  const char* name() const override { return "generate"; }
  bool on_every_rank() const override { return true; }

  std::map<std::string, std::string> inputs(const StageContext& context) const override {
    return {{"step", recorded_output(context, "train", "step").sha256},
            {"settings", sha256_hex(settings_text(sampling_job(context, "")))}};
  }

  void check_can_run(const StageContext& context) const override { check_record_length(context); }

  StageResult run(const StageContext& context) override {
    std::string step_dir;
    comm::run_on_root(context.world, 0, [&] {
      step_dir = recorded_step_dir(context);
      clear_stage_directory(context.paths.synthetic());
    });
    comm::broadcast_text(context.world, step_dir, 0);
    generate::GenerationJob job = sampling_job(context, step_dir);
    comm::run_on_all(context.world, [&] { generate::check_generation_job(job); });
    StageResult result;
    result.code = generate::run_generation(context.world, context.mpi_world, job);
    if (result.code != ExitCode::kOk || context.world.rank() != 0) return result;
    const std::string summary = context.paths.synthetic() + "/generation.json";
    result.outputs["synthetic_table"] = output_file(context.paths.synthetic_table());
    result.outputs["generation"] = output_file(summary);
    const auto json = nlohmann::json::parse(read_text_file(summary, "pipeline"));
    for (const char* key : {"valid_records", "invalid_records", "valid_fraction", "seconds"})
      if (json.contains(key)) result.facts[key] = json.at(key);
    return result;
  }
};

}  // namespace

std::unique_ptr<Stage> make_sampling_stage() {
  return std::make_unique<SamplingStage>();
}

}  // namespace nss::pipeline
