#include "evaluate/evaluation_inputs.h"

#include <fstream>
#include <set>

#include "core/error.h"
#include "core/sha256.h"
#include "data/csv_records.h"
#include "data/example_source.h"
#include "privacy/privacy_report.h"

namespace nss::evaluate {
namespace {

using nlohmann::json;

json read_step_state(const std::string& step) {
  const std::string path = step + "/metadata.json";
  std::ifstream in(path);
  if (!in)
    throw UsageError("evaluate", "--step " + step + ": no readable metadata.json",
                     "give a step directory a run saved (run_dir/checkpoints/step_NNNNNNNN)");
  try {
    return json::parse(in).at("state");
  } catch (const std::exception& e) {
    throw DataError("evaluate", path + ": " + e.what(),
                    "check the step with nss_ckpt verify, or give --train and --holdout");
  }
}

void check_hash(const std::string& path, const std::string& expected, const std::string& what) {
  if (expected.empty()) return;
  const std::string actual = sha256_file_hex(path);
  if (actual != expected)
    throw DataError("evaluate",
                    path + " changed since the data was prepared (" + what + ": SHA-256 " +
                        actual.substr(0, 12) + "..., recorded " + expected.substr(0, 12) + "...)",
                    "evaluate against the files the model was trained on, or give --train and "
                    "--holdout explicitly");
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

}  // namespace

EvaluationInputs read_inputs(const InputPaths& paths) {
  EvaluationInputs in;
  std::string training = paths.training, holdout = paths.holdout;
  json state;
  if (!paths.step.empty()) {
    state = read_step_state(paths.step);
    const json dataset = state.value("dataset", json::object());
    const std::string source = field(dataset, "source_table");
    const std::string recorded_holdout = field(dataset, "holdout_table");
    if (training.empty() && (source.empty() || recorded_holdout.empty()))
      throw UsageError("evaluate",
                       "--step " + paths.step +
                           ": its training data records no holdout (prepared without --holdout)",
                       "give --train TABLE.csv (and --holdout H.csv), or prepare the data with "
                       "nss_prepare_data --holdout");
    if (holdout.empty() && !recorded_holdout.empty()) {
      check_hash(recorded_holdout, field(dataset, "holdout_sha256"), "the holdout");
      holdout = recorded_holdout;
    }
    if (training.empty()) {
      check_hash(source, field(dataset, "source_sha256"), "the training table");
      in.training = training_rows(source, recorded_holdout);
      in.training_source = source;
    }
    if (state.contains("privacy") && state["privacy"].is_object())
      in.privacy_report = privacy::privacy_report(state["privacy"], state.value("step", 0LL));
  }
  if (!training.empty()) {
    in.training = read_table(training, "--train");
    in.training_source = training;
  }
  if (!holdout.empty()) in.holdout = read_table(holdout, "--holdout");
  in.synthetic = read_table(paths.synthetic, "--synthetic");
  return in;
}

}  // namespace nss::evaluate
