// The synthetic records scored against the training rows and the holdout,
// as nss_evaluate --step scores them (evaluate::run_evaluation), into
// <run>/evaluation. Rank 0 alone.
#include "evaluate/evaluation_job.h"
#include "pipeline/stages.h"

namespace nss::pipeline {
namespace {

nlohmann::ordered_json score_json(const evaluate::Score& score) {
  if (!score.score) return nullptr;
  return {{"score", *score.score}, {"grade", score.grade}};
}

class EvaluationStage : public Stage {
 public:
  const char* name() const override { return "evaluate"; }
  bool on_every_rank() const override { return false; }
  bool enabled(const StageContext& context) const override {
    return context.config.pipeline.evaluate;
  }

  std::map<std::string, std::string> inputs(const StageContext& context) const override {
    return {{"step", recorded_output(context, "train", "step").sha256},
            {"synthetic_table", recorded_output(context, "generate", "synthetic_table").sha256}};
  }

  StageResult run(const StageContext& context) override {
    clear_stage_directory(context.paths.evaluation());
    evaluate::EvaluationOptions options;
    options.inputs.step = recorded_step_dir(context);
    options.inputs.synthetic = context.paths.synthetic_table();
    options.output = context.paths.evaluation();
    const auto outcome = evaluate::run_evaluation(options);
    StageResult result;
    result.outputs["evaluation"] = output_file(outcome.json_path);
    result.outputs["report"] = output_file(outcome.report_path);
    result.facts = {{"quality", score_json(outcome.result.quality)},
                    {"privacy", score_json(outcome.result.privacy)}};
    return result;
  }
};

}  // namespace

std::unique_ptr<Stage> make_evaluation_stage() {
  return std::make_unique<EvaluationStage>();
}

}  // namespace nss::pipeline
