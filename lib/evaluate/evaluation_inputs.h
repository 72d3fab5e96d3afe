// What nss_evaluate reads: the training table, the holdout and the
// synthetic table, given as files or found from a trained step (its
// state.dataset names the table the rows came from and the holdout; the
// training rows are the table's rows that are not holdout rows), and the
// privacy guarantee of a privately trained step.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "evaluate/table.h"

namespace nss::evaluate {

struct InputPaths {
  std::string training, holdout, synthetic;  // holdout may be empty
  std::string step;                          // a step directory, or empty
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
};

/// Reads the tables. With `step`: the training and holdout paths default to
/// its dataset record's source_table minus holdout_table (each checked
/// against its recorded SHA-256), and a private step's guarantee is read.
/// CheckpointError for a directory that is not a committed step; UsageError
/// for a step without a holdout record and no --train; DataError for
/// unreadable files, a changed file (its hash) and the table errors of
/// read_table.
EvaluationInputs read_inputs(const InputPaths& paths);

}  // namespace nss::evaluate
