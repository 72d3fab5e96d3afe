// pii.json: what PII handling found in a table's training rows and what it
// did — per column the entity assigned and the evidence, the entities found
// in free text, counts and distinct counts (never a value), the transform —
// under NeMo Safe Synthesizer's column-statistics names. nss_evaluate reads
// it back for PII replay.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "pii/table_transform.h"

namespace nss::pii {

inline constexpr const char* kReportFormat = "nss_pii_report";
inline constexpr int kReportVersion = 1;

/// The run a report describes, beside the result.
struct PiiReportInfo {
  std::string tool = "nss_prepare_data";
  PiiMode mode = PiiMode::kReplace;
  std::vector<Entity> entities;
  std::string source_table, source_sha256;
  std::int64_t training_rows = 0, holdout_rows = 0;
  // The source's data rows (0: the first after the header) in the holdout:
  // the original training rows are the others.
  std::vector<std::int64_t> holdout_source_rows;
  std::string key_id;  // empty without a key (detect, redact)
  double seconds = 0;
  // The named-entity model's description (TextEntityModel::describe), null
  // when none was given.
  nlohmann::ordered_json named_entity_model;
};

/// The report's text (JSON), to be written owner-only (private data).
std::string pii_report_text(const PiiReportInfo& info, const PiiResult& result);

/// One column of a report read back.
struct ReportedColumn {
  std::string name;
  std::optional<std::string> assigned_entity;
  std::map<std::string, std::int64_t> detected_entity_counts;
  std::vector<std::string> transform_functions;
  std::string evidence;  // how the entity was decided: values, header+values, option, kept, scan
};

struct PiiReport {
  std::string path, mode, key_id, source_table, source_sha256;
  std::int64_t training_rows = 0, holdout_rows = 0;
  std::vector<std::int64_t> holdout_source_rows;  // ascending
  std::vector<ReportedColumn> columns;            // in the table's column order
};

/// What PII handling found in a table, for one-line accounts: the columns
/// given an entity, and the values found inside the text of the others.
struct PiiFindings {
  std::vector<std::string> columns;  // "email (email)", in column order
  std::int64_t values_in_text = 0;
  std::int64_t text_columns = 0;  // the other columns with any value found
  bool any() const { return !columns.empty() || values_in_text > 0; }
  /// "customer (name), email (email)".
  std::string column_list() const;
};

PiiFindings pii_findings(const PiiResult& result);
PiiFindings pii_findings(const PiiReport& report);

/// Reads `path`; DataError naming it for another format, a newer version, a
/// missing or mistyped field, or holdout rows that are not ascending source
/// rows as many as holdout_rows says.
PiiReport read_pii_report(const std::string& path);

}  // namespace nss::pii
