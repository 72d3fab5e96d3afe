// The report's two faces: preflight.json (schema_version 1, docs/preflight.md
// describes every field) and the table rank 0 prints to the log.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "preflight/rank_facts.h"
#include "preflight/report.h"

namespace nss::preflight {

constexpr int kPreflightSchemaVersion = 1;

/// The whole preflight.json document.
nlohmann::ordered_json report_to_json(const PreflightReport& report, const Verdict& verdict,
                                      int world_size, double duration_s,
                                      const std::vector<RankFacts>& ranks);

/// Writes preflight.json into `run_dir` atomically (temporary file + rename).
void write_preflight_json(const std::string& run_dir, const nlohmann::ordered_json& document);

/// The readable table: one line per check, remediation lines under those that
/// did not pass, then the verdict.
std::vector<std::string> format_report_table(const PreflightReport& report, const Verdict& verdict);

}  // namespace nss::preflight
