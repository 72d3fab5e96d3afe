#include "evaluate/evaluation_job.h"

#include <chrono>
#include <ctime>

#include "core/build_info.h"
#include "core/output_directory.h"
#include "evaluate/evaluation_json.h"
#include "evaluate/evaluation_tables.h"
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
  return context;
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
  outcome.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  nlohmann::ordered_json doc = evaluation_json(outcome.result);
  doc["inputs"] = {
      {"training", input_json(in.training_file, in.training.rows)},
      {"holdout", input_json(in.holdout_file, in.holdout ? in.holdout->rows : 0)},
      {"synthetic", input_json(in.synthetic_file, in.synthetic.rows)},
      {"step", options.inputs.step.empty() ? nlohmann::ordered_json(nullptr)
                                           : nlohmann::ordered_json(options.inputs.step)}};
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
