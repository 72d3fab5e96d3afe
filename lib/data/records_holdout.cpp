#include "data/records_holdout.h"

#include "core/output_location.h"
#include "core/sha256.h"
#include "data/csv_records.h"
#include "data/output_names.h"

namespace nss::data {

RecordsSplit split_records(RecordsTable table, const std::string& group_by,
                           const HoldoutOptions& options) {
  const bool grouped = !group_by.empty();
  const std::size_t group_column =
      grouped ? column_index(table.header, group_by, "--group-by", table.path) : 0;
  std::vector<std::string> keys;
  keys.reserve(table.rows.size());
  for (const auto& row : table.rows) keys.push_back(grouped ? row[group_column] : csv_line(row));
  RecordsSplit out;
  out.split = split_holdout(keys, options);
  out.training.path = out.holdout.path = table.path;
  out.training.header = out.holdout.header = table.header;
  if (out.split.held_out.empty()) {
    out.training.rows = std::move(table.rows);
    return out;
  }
  for (std::size_t r = 0; r < table.rows.size(); ++r)
    (out.split.held_out[r] ? out.holdout : out.training).rows.push_back(std::move(table.rows[r]));
  return out;
}

std::string holdout_csv_path(const std::string& output) {
  return beside_output(output, ".holdout.csv");
}

std::string holdout_tokens_path(const std::string& output) {
  return beside_output(output, ".holdout.h5");
}

std::string table_csv(const RecordsTable& table) {
  std::string text = csv_line(table.header);
  for (const auto& row : table.rows) text += csv_line(row);
  return text;
}

HoldoutRecord source_record(const std::string& source) {
  HoldoutRecord record;
  record.source_table = absolute_path(source);
  record.source_sha256 = sha256_file_hex(source);
  return record;
}

void stage_holdout_table(const RecordsSplit& split, const HoldoutOptions& options,
                         const std::string& output, HoldoutRecord& record, StagedOutputs& staged) {
  const std::string text = table_csv(split.holdout);
  OutputTarget target;
  target.path = holdout_csv_path(output);
  target.component = "data";
  target.option = "--output";
  target.existing = ExistingOutput::kReplaceFile;
  target.private_data = true;
  staged.stage(target, text);
  record.split = "training";
  record.holdout_table = absolute_path(target.path);
  record.holdout_sha256 = sha256_hex(text);
  record.holdout_rows = static_cast<std::int64_t>(split.holdout.rows.size());
  record.training_rows = static_cast<std::int64_t>(split.training.rows.size());
  record.holdout_seed = static_cast<std::int64_t>(options.seed);
}

}  // namespace nss::data
