#include "evaluate/evaluation_job.h"

#include <chrono>
#include <ctime>

#include "core/build_info.h"
#include "core/output_directory.h"
#include "evaluate/evaluation_json.h"
#include "evaluate/evaluation_tables.h"
#include "evaluate/pii_replay.h"
#include "evaluate/privacy_metrics.h"
#include "evaluate/quality_metrics.h"
#include "evaluate/report_html.h"

namespace nss::evaluate {
namespace {

constexpr const char* kJsonFile = "evaluation.json";
constexpr const char* kReportFile = "report.html";

nlohmann::ordered_json input_json(const InputFile& file, std::size_t rows) {
  if (file.path.empty()) return nullptr;
  return {{"path", file.path}, {"sha256", file.sha256}, {"rows", rows}};
}

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return text;
}

ReportContext report_context(const EvaluationOptions& options, const EvaluationInputs& in) {
  ReportContext context;
  context.training_path = in.training_file.path;
  context.holdout_path = in.holdout_file.path;
  context.synthetic_path = in.synthetic_file.path;
  context.generated_at = utc_now();
  context.version = build_version();
  context.training_known = !options.inputs.step.empty();
  if (!in.privacy_report.is_null()) {
    context.trained_privately = true;
    context.epsilon = in.privacy_report.value("epsilon", 0.0);
    context.delta = in.privacy_report.value("delta", 0.0);
    context.accountant = in.privacy_report.value("accountant", "");
  }
  context.pii = in.pii ? &in.pii->report : nullptr;
  return context;
}

// PII replay against the original training rows, when a PII report is known.
void measure_replay(const EvaluationInputs& in, EvaluationResult& result) {
  if (!in.pii) return;
  result.pii_replay_data =
      measure_pii_replay(in.pii->original_training, in.synthetic, replay_columns(in.pii->report));
  result.pii_replay = unavailable(
      "never scored, as in NeMo Safe Synthesizer: the share of each column's distinct training "
      "values found in the synthetic table is listed in PII Replay Analysis");
}

nlohmann::ordered_json pii_report_json(const EvaluationInputs& in) {
  if (!in.pii) return nullptr;
  return {{"path", in.pii_report_path},
          {"sha256", in.pii->report_sha256},
          {"mode", in.pii->report.mode},
          {"source_table", in.pii->report.source_table},
          {"original_training_rows", in.pii->original_training.rows}};
}

}  // namespace

EvaluationResult evaluate(const Table& training, const Table& synthetic,
                          const std::optional<Table>& holdout) {
  const EvaluationTables tables = make_evaluation_tables(training, synthetic, holdout);
  EvaluationResult result;
  measure_quality(tables, result);
  measure_privacy(tables, result);
  return result;
}

EvaluationOutcome run_evaluation(const EvaluationOptions& options) {
  OutputTarget target;
  target.path = options.output;
  target.component = "evaluate";
  OutputDirectory dir(target, "evaluation output directory", {kJsonFile, kReportFile});
  const auto start = std::chrono::steady_clock::now();
  const EvaluationInputs in = read_inputs(options.inputs);
  EvaluationOutcome outcome;
  outcome.result = evaluate(in.training, in.synthetic, in.holdout);
  measure_replay(in, outcome.result);
  outcome.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  nlohmann::ordered_json doc = evaluation_json(outcome.result);
  doc["inputs"] = {
      {"training", input_json(in.training_file, in.training.rows)},
      {"holdout", input_json(in.holdout_file, in.holdout ? in.holdout->rows : 0)},
      {"synthetic", input_json(in.synthetic_file, in.synthetic.rows)},
      {"step", options.inputs.step.empty() ? nlohmann::ordered_json(nullptr)
                                           : nlohmann::ordered_json(options.inputs.step)}};
  if (doc["pii_replay"].is_object()) doc["pii_replay"]["report"] = pii_report_json(in);
  doc["privacy"] = in.privacy_report.is_null() ? nlohmann::ordered_json(nullptr)
                                               : nlohmann::ordered_json(in.privacy_report);
  doc["timing"] = {{"evaluation_time_sec", outcome.seconds}};
  doc["nss_hpc_version"] = build_version();
  dir.keep();
  outcome.json_path = dir.file(kJsonFile).path;
  outcome.report_path = dir.file(kReportFile).path;
  write_output_file(dir.file(kReportFile),
                    report_html(outcome.result, report_context(options, in)));
  write_output_file(dir.file(kJsonFile), doc.dump(2) + "\n");
  return outcome;
}

}  // namespace nss::evaluate
