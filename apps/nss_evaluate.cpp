// nss_evaluate --train T.csv [--holdout H.csv] --synthetic S.csv --output DIR
// nss_evaluate --step STEP_DIR --synthetic S.csv --output DIR [--pii REPORT]
// The quality (SQS) and privacy (DPS) of a synthetic table, scored as NeMo
// Safe Synthesizer scores it: DIR/evaluation.json and DIR/report.html.
#include <cstdio>

#include <CLI/CLI.hpp>

#include "core/app_main.h"
#include "evaluate/evaluation_job.h"
#include "tool_cli.h"

namespace {

std::string shown(const nss::evaluate::Score& score) {
  if (!score.score) return "unavailable";
  char text[64];
  std::snprintf(text, sizeof text, "%.1f (%s)", *score.score, score.grade.c_str());
  return text;
}

}  // namespace

int main(int argc, char** argv) {
  return nss::run_app("nss_evaluate", [&] {
    nss::evaluate::EvaluationOptions options;
    auto& in = options.inputs;
    CLI::App cli{
        "nss_evaluate: how good and how private a synthetic table is, against its training "
        "table and a holdout (docs/evaluate.md)"};
    cli.add_option("--train", in.training, "Training table (CSV); default: from --step");
    cli.add_option("--holdout", in.holdout,
                   "Rows held out of training (CSV); default: from --step. Without one, no "
                   "membership inference");
    cli.add_option("--synthetic", in.synthetic, "Synthetic table (CSV), e.g. synthetic.csv")
        ->required();
    cli.add_option("--step", in.step,
                   "A trained step: finds the training table and holdout its data recorded, "
                   "and the privacy guarantee");
    cli.add_option("--pii", in.pii_report,
                   "The pii.json of nss_prepare_data --pii (default: the step's): measures PII "
                   "replay against the original training rows");
    cli.add_option("--output", options.output,
                   "Directory for evaluation.json and report.html (new, or without them)")
        ->required();
    if (!nss::parse_tool_arguments(
            cli, argc, argv, "nss_evaluate",
            "nss_evaluate (--train T.csv [--holdout H.csv] | --step STEP_DIR) --synthetic "
            "S.csv --output DIR"))
      return nss::ExitCode::kOk;
    if (in.training.empty() && in.step.empty())
      throw nss::UsageError("nss_evaluate", "no training table",
                            "give --train T.csv, or --step STEP_DIR of a run whose data was "
                            "prepared with --holdout");
    const auto outcome = nss::evaluate::run_evaluation(options);
    std::printf("SQS %s, DPS %s in %.1f s: %s\n", shown(outcome.result.quality).c_str(),
                shown(outcome.result.privacy).c_str(), outcome.seconds,
                outcome.report_path.c_str());
    return nss::ExitCode::kOk;
  });
}
