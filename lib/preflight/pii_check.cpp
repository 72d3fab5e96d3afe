#include "preflight/pii_check.h"

#include "core/error.h"
#include "data/csv_records.h"
#include "data/example_source.h"
#include "data/input_file.h"
#include "pii/pii_report.h"
#include "pii/table_transform.h"
#include "pii/word_lists.h"

namespace nss::preflight {
namespace {

constexpr const char* kId = "data.pii";

// The first rows of the CSV at `path`, as the records reader reads them.
data::RecordsTable sample_rows(const std::string& path) {
  std::ifstream in = data::open_input(path, "source_table");
  data::CsvReader reader(in, path);
  data::RecordsTable table;
  table.path = path;
  table.header = data::read_csv_header(reader, path);
  std::vector<std::string> row;
  while (table.rows.size() < kPiiSampleRows && data::next_csv_row(reader, table.header, row, path))
    table.rows.push_back(row);
  return table;
}

// "columns email (email), ...; N values inside free text".
std::string found_text(const pii::PiiFindings& found) {
  return (found.columns.empty() ? "no column" : "columns " + found.column_list()) + "; " +
         std::to_string(found.values_in_text) + " values inside free text";
}

Check scan_original(const std::string& file, const data::HoldoutRecord& source) {
  if (source.source_table.empty())
    return Check::skipped(kId, ExitCode::kData,
                          file +
                              " was prepared without PII handling and records no source "
                              "table to scan (prepared by an earlier nss_hpc)");
  data::RecordsTable table;
  pii::WordLists lists;
  try {
    table = sample_rows(source.source_table);
    lists = pii::load_word_lists(pii::faker_dir());
  } catch (const Error& e) {
    return Check::skipped(kId, ExitCode::kData,
                          file + " was prepared without PII handling; its table " +
                              source.source_table + " was not scanned: " + e.message());
  }
  pii::PiiOptions options{pii::PiiMode::kDetect, {}};
  const pii::PiiResult result =
      pii::transform_tables(table.header, table.rows, {}, options, nullptr, lists);
  const pii::PiiFindings found = pii::pii_findings(result);
  const std::string sample =
      "the first " + std::to_string(table.rows.size()) + " rows of " + source.source_table;
  if (!found.any())
    return Check::pass(kId, ExitCode::kData,
                       file + " was prepared without PII handling; no personal data in " + sample);
  return Check::warn(kId, ExitCode::kData,
                     file + " was prepared without PII handling and " + sample +
                         " hold personal data (" + found_text(found) + "): the model trains on it",
                     "prepare the table with nss_prepare_data --format records --pii replace "
                     "(the default), or --pii detect to see the report");
}

Check reported(const std::string& file, const data::PiiRecord& record) {
  const std::string ran = file + " was prepared with --pii " + record.mode;
  pii::PiiReport report;
  try {
    report = pii::read_pii_report(record.report);
  } catch (const Error& e) {
    return Check::warn(kId, ExitCode::kData, ran + "; " + e.message(),
                       "restore the report: nss_evaluate needs it for PII replay");
  }
  const pii::PiiFindings found = pii::pii_findings(report);
  if (record.mode == "detect" && found.any())
    return Check::warn(kId, ExitCode::kData,
                       ran + ": personal data found and left in the training rows (" +
                           found_text(found) + "; report " + record.report + ")",
                       "prepare the table with --pii replace, hash or redact to keep it from the "
                       "model");
  return Check::pass(kId, ExitCode::kData,
                     ran + " (" + found_text(found) + "; report " + record.report + ")");
}

}  // namespace

Check pii_check(const std::string& key, const data::TokenDataset& tokens) {
  const data::TokenFileMetadata& metadata = tokens.metadata();
  const std::string file = key + " " + tokens.path();
  if (!metadata.pii.mode.empty()) return reported(file, metadata.pii);
  return scan_original(file, metadata.holdout);
}

}  // namespace nss::preflight
