// What PII replay reads: the pii.json nss_prepare_data --pii wrote, and the
// training rows as they were before PII handling changed them — the
// report's source table, unchanged since (its SHA-256), without the rows the
// report names as the holdout.
#pragma once

#include <string>
#include <vector>

#include "evaluate/pii_replay.h"
#include "evaluate/table.h"
#include "pii/pii_report.h"

namespace nss::evaluate {

struct PiiInputs {
  pii::PiiReport report;
  std::string report_sha256;
  Table original_training;
};

/// Reads the report at `path` (its SHA-256 checked against `expected` when
/// not empty) and the original training rows. DataError naming the file for
/// a report that changed, is damaged or of another format, a source table
/// that changed or is gone, and holdout rows beyond the source's rows.
PiiInputs read_pii_inputs(const std::string& path, const std::string& expected);

/// The report's columns with an entity, in its order, for measure_pii_replay.
std::vector<PiiColumn> replay_columns(const pii::PiiReport& report);

}  // namespace nss::evaluate
