// What nss_evaluate reads: the training table, the holdout and the
// synthetic table, given as files or found from a trained step (its
// state.dataset names the table the rows came from and the holdout; the
// training rows are the rows trained on as PII handling left them, or the
// table's rows that are not holdout rows), the PII report and the original
// training rows for PII replay, and the privacy guarantee of a privately
// trained step.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "evaluate/pii_inputs.h"
#include "evaluate/table.h"

namespace nss::evaluate {

struct InputPaths {
  std::string training, holdout, synthetic;  // holdout may be empty
  std::string step;                          // a step directory, or empty
  std::string pii_report;                    // --pii; empty: the step's, if any
};

/// A file the evaluation read, as evaluation.json names it.
struct InputFile {
  std::string path;    // empty when there is none (no holdout)
  std::string sha256;  // hex
};

struct EvaluationInputs {
  Table training;
  std::optional<Table> holdout;
  Table synthetic;
  InputFile training_file;  // the file the training rows came from
  InputFile holdout_file;
  InputFile synthetic_file;
  nlohmann::json privacy_report;  // a private step's guarantee (epsilon, delta, ...), or null
  std::optional<PiiInputs> pii;   // a PII report: replay is measured
  std::string pii_report_path;
};

/// Reads the tables. With `step`: the training table defaults to its dataset
/// record's training_table (PII handling's output) or else source_table
/// (minus holdout_table when there is one), the holdout to holdout_table, the PII report to
/// pii_report (each checked against its recorded SHA-256), and a private step's guarantee is read.
/// With a PII report (`paths.pii_report` or the step's), the inputs of read_pii_inputs.
/// CheckpointError for a directory that is not a committed step; UsageError
/// for a step whose data records no table and no --train; DataError for
/// unreadable files, a changed file (its hash) and the table errors of
/// read_table.
EvaluationInputs read_inputs(const InputPaths& paths);

}  // namespace nss::evaluate
