// report.html: one self-contained page (inline CSS and SVG, no script, no
// external reference) that shows an EvaluationResult the way NeMo Safe
// Synthesizer's evaluation report does. Every string from the data is
// HTML-escaped. Markers a test can read back (scripts/check_report_html.py):
// class="score" elements with data-score (which score), data-value (one
// decimal, empty when unavailable) and data-grade; class="column-score" per
// column (data-column, data-value); class="dp-notice" on the sentence saying
// the report has no differential-privacy guarantee; class="pii-replay" rows
// (report_pii.h).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "evaluate/evaluation_result.h"
#include "pii/pii_report.h"

namespace nss::evaluate {

/// What the page says about the run beside the result.
struct ReportContext {
  std::string training_path, holdout_path, synthetic_path;  // holdout_path empty: none
  std::string generated_at;                                 // as the caller formats it
  std::string version;                                      // nss_hpc's version
  bool training_known = false;     // the run is known (--step): trained_privately says how
  bool trained_privately = false;  // trained with differential privacy
  std::optional<double> epsilon, delta;
  std::string accountant;               // the privacy accountant's name, e.g. "prv"
  const pii::PiiReport* pii = nullptr;  // the PII report read, if any
  std::vector<std::string> notes;
};

/// The page: byte-identical for identical inputs.
std::string report_html(const EvaluationResult& result, const ReportContext& context);

/// `text` safe inside HTML text and attribute values: & < > " ' escaped,
/// invalid UTF-8 and control characters replaced by U+FFFD.
std::string html_escape(const std::string& text);

}  // namespace nss::evaluate
