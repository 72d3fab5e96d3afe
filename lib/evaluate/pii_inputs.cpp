#include "evaluate/pii_inputs.h"

#include "core/error.h"
#include "core/sha256.h"
#include "data/example_source.h"

namespace nss::evaluate {
namespace {

std::string short_hash(const std::string& hex) {
  return hex.substr(0, 12) + "...";
}

// The source table's rows that are not among the report's holdout rows.
Table original_training_rows(const pii::PiiReport& report) {
  const std::string& source = report.source_table;
  const std::string prepare =
      "evaluate against the table the data was prepared from, or prepare "
      "it again with nss_prepare_data --pii";
  std::string actual;
  try {
    actual = sha256_file_hex(source);
  } catch (const Error& e) {
    throw DataError("evaluate",
                    "the PII report " + report.path + " names the table " + source +
                        ", which cannot be read: " + e.message(),
                    "restore it: PII replay compares the synthetic table with its original "
                    "values");
  }
  if (actual != report.source_sha256)
    throw DataError("evaluate",
                    source + " changed since the PII report " + report.path +
                        " was made (SHA-256 " + short_hash(actual) + ", recorded " +
                        short_hash(report.source_sha256) + ")",
                    prepare);
  const data::RecordsTable table = data::read_records_table(source);
  const auto& held = report.holdout_source_rows;
  if (!held.empty() && held.back() >= static_cast<std::int64_t>(table.rows.size()))
    throw DataError("evaluate",
                    "the PII report " + report.path + " names holdout row " +
                        std::to_string(held.back()) + " of " + source + ", which has " +
                        std::to_string(table.rows.size()) + " rows",
                    prepare);
  std::vector<std::vector<std::string>> kept;
  std::size_t next = 0;
  for (std::size_t r = 0; r < table.rows.size(); ++r) {
    if (next < held.size() && held[next] == static_cast<std::int64_t>(r)) {
      ++next;
      continue;
    }
    kept.push_back(table.rows[r]);
  }
  if (static_cast<std::int64_t>(kept.size()) != report.training_rows)
    throw DataError("evaluate",
                    "the PII report " + report.path + " counts " +
                        std::to_string(report.training_rows) + " training rows, " + source +
                        " without the holdout has " + std::to_string(kept.size()),
                    prepare);
  return make_table(table.header, kept, source);
}

}  // namespace

PiiInputs read_pii_inputs(const std::string& path, const std::string& expected) {
  PiiInputs in;
  try {
    in.report_sha256 = sha256_file_hex(path);
  } catch (const Error& e) {
    throw DataError("evaluate", "the PII report " + path + " cannot be read: " + e.message(),
                    "give --pii the pii.json nss_prepare_data wrote, or restore it");
  }
  if (!expected.empty() && in.report_sha256 != expected)
    throw DataError("evaluate",
                    "the PII report " + path + " changed since the data was prepared (SHA-256 " +
                        short_hash(in.report_sha256) + ", recorded " + short_hash(expected) + ")",
                    "restore it, or give --pii the report of this preparation");
  in.report = pii::read_pii_report(path);
  in.original_training = original_training_rows(in.report);
  return in;
}

std::vector<PiiColumn> replay_columns(const pii::PiiReport& report) {
  std::vector<PiiColumn> columns;
  for (const pii::ReportedColumn& column : report.columns) {
    if (!column.assigned_entity) continue;
    const auto count = column.detected_entity_counts.find(*column.assigned_entity);
    columns.push_back({column.name, *column.assigned_entity,
                       count == column.detected_entity_counts.end() ? 0 : count->second});
  }
  return columns;
}

}  // namespace nss::evaluate
