// report.html's personal-data section: PII replay per column (NeMo Safe
// Synthesizer's "PII Replay Analysis" table) and what PII handling did to
// each column of the training table (entities found, how each column was
// decided, the transform), from the pii.json nss_prepare_data wrote.
#pragma once

#include <optional>
#include <string>

#include "evaluate/evaluation_result.h"
#include "pii/pii_report.h"

namespace nss::evaluate {

/// Appends the section; without a report, a line saying how to get one.
/// Marker: class="pii-replay" rows with data-column and data-value (the
/// replay percentage).
void append_pii_section(std::string& out, const std::optional<PiiReplayResult>& replay,
                        const pii::PiiReport* report);

}  // namespace nss::evaluate
