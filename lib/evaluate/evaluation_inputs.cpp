#include "evaluate/evaluation_inputs.h"

#include <set>

#include "checkpoint/committed_step.h"
#include "checkpoint/index.h"
#include "checkpoint/trained_model.h"
#include "core/error.h"
#include "core/sha256.h"
#include "data/csv_records.h"
#include "data/example_source.h"
#include "privacy/privacy_report.h"

namespace nss::evaluate {
namespace {

using nlohmann::json;

// A step's record of its training, read as every tool reads a step: a
// committed step only, its metadata.json parsed and checked.
checkpoint::TrainedModel read_step(const std::string& step) {
  checkpoint::require_committed_step(step);
  return checkpoint::trained_model(checkpoint::read_index(step), step);
}

// `path` with its SHA-256, hashed once; a recorded hash (`expected`, when
// not empty) that differs is a DataError: the file changed since preparation.
InputFile hashed_file(const std::string& path, const std::string& expected,
                      const std::string& what) {
  InputFile file{path, sha256_file_hex(path)};
  if (!expected.empty() && file.sha256 != expected)
    throw DataError("evaluate",
                    path + " changed since the data was prepared (" + what + ": SHA-256 " +
                        file.sha256.substr(0, 12) + "..., recorded " + expected.substr(0, 12) +
                        "...)",
                    "evaluate against the files the model was trained on, or give --train and "
                    "--holdout explicitly");
  return file;
}

// The source table's rows that are not holdout rows: the training rows (a
// row and its copies are always on one side of the split).
Table training_rows(const std::string& source, const std::string& holdout) {
  const data::RecordsTable table = data::read_records_table(source);
  const data::RecordsTable held = data::read_records_table(holdout);
  std::set<std::string> held_rows;
  for (const auto& row : held.rows) held_rows.insert(data::csv_line(row));
  std::vector<std::vector<std::string>> kept;
  for (const auto& row : table.rows)
    if (!held_rows.count(data::csv_line(row))) kept.push_back(row);
  if (kept.empty())
    throw DataError("evaluate", source + ": every row is a holdout row",
                    "give --train with the training table");
  return make_table(table.header, kept, source);
}

std::string field(const json& dataset, const char* key) {
  return dataset.contains(key) && dataset[key].is_string() ? dataset[key].get<std::string>() : "";
}

// The training rows a step's data names: as trained on (after PII handling),
// else the source table without its holdout rows.
void read_step_training(const json& dataset, EvaluationInputs& in) {
  const std::string transformed = field(dataset, "training_table");
  if (!transformed.empty()) {
    in.training_file =
        hashed_file(transformed, field(dataset, "training_sha256"), "the training rows");
    in.training = read_table(transformed, "--train");
    return;
  }
  const std::string source = field(dataset, "source_table");
  const std::string holdout = field(dataset, "holdout_table");
  in.training_file = hashed_file(source, field(dataset, "source_sha256"), "the training table");
  in.training = holdout.empty() ? read_table(source, "--train") : training_rows(source, holdout);
}

// The defaults a step gives: the tables its data was prepared from, its
// PII report and its privacy guarantee.
void read_step_inputs(const InputPaths& paths, EvaluationInputs& in, std::string& holdout,
                      std::string& pii_expected) {
  const checkpoint::TrainedModel trained = read_step(paths.step);
  const json dataset = trained.dataset.is_object() ? trained.dataset : json::object();
  const std::string recorded_holdout = field(dataset, "holdout_table");
  if (paths.training.empty() && field(dataset, "training_table").empty() &&
      field(dataset, "source_table").empty())
    throw UsageError("evaluate",
                     "--step " + paths.step +
                         ": its training data records no table (not prepared from a records CSV "
                         "by this nss_hpc)",
                     "give --train TABLE.csv (and --holdout H.csv), or prepare the data with "
                     "nss_prepare_data --format records --holdout");
  if (holdout.empty() && !recorded_holdout.empty()) {
    in.holdout_file =
        hashed_file(recorded_holdout, field(dataset, "holdout_sha256"), "the holdout");
    holdout = recorded_holdout;
  }
  if (paths.training.empty()) read_step_training(dataset, in);
  if (paths.pii_report.empty()) {
    in.pii_report_path = field(dataset, "pii_report");
    pii_expected = field(dataset, "pii_report_sha256");
  }
  if (trained.privacy.is_object())
    in.privacy_report = privacy::privacy_report(trained.privacy, trained.step, trained.dataset);
}

}  // namespace

EvaluationInputs read_inputs(const InputPaths& paths) {
  EvaluationInputs in;
  std::string holdout = paths.holdout, pii_expected;
  in.pii_report_path = paths.pii_report;
  if (!paths.step.empty()) read_step_inputs(paths, in, holdout, pii_expected);
  if (!paths.training.empty()) {
    in.training = read_table(paths.training, "--train");
    in.training_file = hashed_file(paths.training, "", "");
  }
  if (!holdout.empty()) {
    in.holdout = read_table(holdout, "--holdout");
    if (in.holdout_file.path.empty()) in.holdout_file = hashed_file(holdout, "", "");
  }
  in.synthetic = read_table(paths.synthetic, "--synthetic");
  in.synthetic_file = hashed_file(paths.synthetic, "", "");
  if (!in.pii_report_path.empty()) in.pii = read_pii_inputs(in.pii_report_path, pii_expected);
  return in;
}

}  // namespace nss::evaluate
