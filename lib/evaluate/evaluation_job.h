// One nss_evaluate run: read the tables (evaluation_inputs.h), measure
// quality and privacy, write evaluation.json and report.html into the output
// directory (core/output_directory.h: new, or existing without those files).
#pragma once

#include <string>

#include "evaluate/evaluation_inputs.h"
#include "evaluate/evaluation_result.h"

namespace nss::evaluate {

struct EvaluationOptions {
  InputPaths inputs;
  std::string output;  // directory
};

struct EvaluationOutcome {
  EvaluationResult result;
  std::string json_path, report_path;
  double seconds = 0;
};

/// Every metric of `training` against `synthetic` (and the holdout).
EvaluationResult evaluate(const Table& training, const Table& synthetic,
                          const std::optional<Table>& holdout);

/// The whole run. UsageError for the output directory (as every tool's);
/// DataError for the inputs.
EvaluationOutcome run_evaluation(const EvaluationOptions& options);

}  // namespace nss::evaluate
