#include "evaluate/report_pii.h"

#include "evaluate/report_html.h"
#include "evaluate/report_text.h"
#include "evaluate/table.h"

namespace nss::evaluate {
namespace {

using report::append;
using report::thousands;

void append_replay_table(std::string& out, const PiiReplayResult& replay) {
  append(out,
         "<p>Identifies personally identifiable information replayed from training to "
         "synthetic data: of each column's distinct training values (the originals, before "
         "replacement), how many appear in the synthetic table. ",
         thousands(static_cast<std::size_t>(replay.training_total_records)), " training and ",
         thousands(static_cast<std::size_t>(replay.synthetic_total_records)),
         " synthetic rows, all of them.</p>");
  if (replay.pii_replay_data.empty()) {
    out += "<p class=\"na\">No column was given an entity: nothing to replay.</p>";
    return;
  }
  out +=
      "<table><thead><tr><th>Column Name</th><th>PII Type</th><th class=\"num\">Training "
      "Total</th><th class=\"num\">Training Unique</th><th class=\"num\">Synthetic Total</th>"
      "<th class=\"num\">PII Replay</th></tr></thead><tbody>";
  for (const PiiReplayDatum& d : replay.pii_replay_data) {
    const std::string name = html_escape(d.column_name);
    const std::string share = python_float_repr(d.unique_synthetic_data_percentage);
    append(out, "<tr class=\"pii-replay\" data-column=\"", name, "\" data-value=\"", share,
           "\"><td>", name, "</td><td>", html_escape(d.pii_type), "</td><td class=\"num\">",
           thousands(static_cast<std::size_t>(d.total_training_data)), "</td><td class=\"num\">",
           thousands(static_cast<std::size_t>(d.unique_training_data)), "</td><td class=\"num\">",
           thousands(static_cast<std::size_t>(d.total_synthetic_data)), "</td><td class=\"num\">",
           std::to_string(d.unique_synthetic_data), "/", std::to_string(d.unique_training_data),
           " (", share, "%)</td></tr>");
  }
  out +=
      "</tbody></table><p class=\"caption\">Lower replay percentages indicate better privacy "
      "protection for unique PII values.</p>";
}

std::string how_decided(const pii::ReportedColumn& column) {
  if (column.evidence == "kept") return "kept as it is (--pii-keep)";
  if (column.evidence == "option") return "given (--pii-column)";
  if (column.evidence == "header+values") return "header and values";
  if (column.evidence == "values") return "values";
  return "no entity: cells scanned";
}

void append_handling_table(std::string& out, const pii::PiiReport& report) {
  append(out, "<h3>PII handling</h3><p>The training data was prepared with <code>--pii ",
         html_escape(report.mode), "</code> (report <code>", html_escape(report.path),
         "</code>): per column, the entity it was given and how, the entities found in its "
         "cells, and the transform applied.</p>",
         "<table><thead><tr><th>Column</th><th>Entity</th><th>Decided by</th>"
         "<th>Entities (Count)</th><th>Transformed</th><th>Transform function</th></tr>"
         "</thead><tbody>");
  for (const pii::ReportedColumn& column : report.columns) {
    std::string found, functions;
    for (const auto& [entity, count] : column.detected_entity_counts)
      found += (found.empty() ? "" : ", ") + entity + " (" +
               thousands(static_cast<std::size_t>(count)) + ")";
    for (const std::string& function : column.transform_functions)
      functions += (functions.empty() ? "" : ", ") + function;
    append(out, "<tr><td>", html_escape(column.name), "</td><td>",
           html_escape(column.assigned_entity.value_or("\u2014")), "</td><td>", how_decided(column),
           "</td><td>", html_escape(found.empty() ? "\u2014" : found), "</td><td>",
           functions.empty() ? "no" : "yes", "</td><td>",
           html_escape(functions.empty() ? "\u2014" : functions), "</td></tr>");
  }
  out += "</tbody></table>";
}

}  // namespace

void append_pii_section(std::string& out, const std::optional<PiiReplayResult>& replay,
                        const pii::PiiReport* report) {
  out += "<section id=\"pii-replay\"><h2>PII Replay Analysis</h2>";
  if (!replay || !report) {
    out +=
        "<p class=\"na\">Not measured: the training data has no PII report. Prepare it with "
        "<code>nss_prepare_data --pii</code> (on by default for records) and evaluate with "
        "<code>--step</code>, or give <code>--pii REPORT</code>.</p></section>\n";
    return;
  }
  append_replay_table(out, *replay);
  append_handling_table(out, *report);
  out += "</section>\n";
}

}  // namespace nss::evaluate
