#include "evaluate/report_html.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <numeric>

#include "evaluate/report_charts.h"
#include "evaluate/report_pii.h"
#include "evaluate/report_text.h"

namespace nss::evaluate {

using namespace report;  // NOLINT: the page is written with the report helpers

namespace {

// ----------------------------------------------------------------- page sections

const char* const kDpNotice =
    "This report reads the training table (private data) and is itself not covered by any "
    "differential-privacy guarantee \u2014 share it like the training data.";

const char* const kStyle = R"css(
:root{--ink:#1d2329;--muted:#5b6570;--line:#d9dee3;--panel:#f6f8fa;--grade:#8a8a8a}
*{box-sizing:border-box}
body{margin:0;font:14px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;color:var(--ink);background:#fff}
main{max-width:1240px;margin:0 auto;padding:24px 32px 48px}
h1{font-size:26px;margin:0 0 4px}
h2{font-size:20px;margin:0 0 10px;border-bottom:1px solid var(--line);padding-bottom:4px}
h3{font-size:16px;margin:14px 0 6px}
section{margin:36px 0}
nav a{margin-right:14px;color:#0b5cad;text-decoration:none}
.subtitle,.meta,.note,.left-out,.na,.caption{color:var(--muted)}
.na{font-style:italic}
.dp-notice{background:#fff4e5;border-left:4px solid #d9731a;padding:8px 12px;margin:14px 0;font-weight:600}
dl.run{display:grid;grid-template-columns:max-content 1fr;gap:2px 16px;margin:12px 0}
dl.run dt{color:var(--muted)}
dl.run dd{margin:0;word-break:break-all}
code{font-size:12px;background:var(--panel);padding:1px 4px;border-radius:3px}
.scores{display:flex;gap:24px;flex-wrap:wrap}
.score-card{flex:1 1 320px;border:1px solid var(--line);border-top:8px solid var(--grade);border-radius:8px;padding:14px 20px;background:var(--panel)}
.score-card h2{border:0;font-size:18px;margin:0;padding:0}
.score-card .big{font-size:64px;font-weight:700;line-height:1.1;color:var(--grade)}
.out-of{font-size:24px;color:var(--muted);font-weight:400}
.grade-excellent{--grade:#1a7f37}.grade-very-good{--grade:#5a9e2f}.grade-good{--grade:#b58900}
.grade-moderate{--grade:#d9731a}.grade-poor{--grade:#c62828}.grade-unavailable{--grade:#8a8a8a}
.grade{display:inline-block;padding:1px 8px;border-radius:10px;color:#fff;background:var(--grade);font-size:12px;font-weight:600;white-space:nowrap}
.score-card .grade{font-size:16px;padding:2px 12px}
table{border-collapse:collapse;margin:8px 0}
th,td{border-bottom:1px solid var(--line);padding:4px 10px;text-align:left;vertical-align:top}
thead th{border-bottom:2px solid var(--line)}
.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.two{display:grid;grid-template-columns:1fr 1fr;gap:28px}
@media (max-width:900px){.two{grid-template-columns:1fr}}
.charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(560px,1fr));gap:16px;align-items:start}
figure.scatter{width:fit-content;max-width:100%}
.heatmaps{display:flex;flex-wrap:wrap;gap:16px;align-items:flex-start}
figure{margin:0;border:1px solid var(--line);border-radius:6px;padding:10px;background:#fff;overflow-x:auto}
figcaption{margin-bottom:6px}
svg{display:block}
svg text{font-size:11px;fill:var(--ink)}
svg text.tick{font-size:10px;fill:var(--muted)}
svg text.cell{font-size:9px;pointer-events:none}
svg text.light{fill:#fff}
svg .grid{stroke:#e3e7eb;stroke-width:1}
.swatch{display:inline-block;width:12px;height:12px;border-radius:2px;vertical-align:-1px;margin:0 4px 0 12px}
.swatch.training{background:#1f77b4}.swatch.synthetic{background:#ff7f0e}
.memorized strong{font-size:16px}
footer{color:var(--muted);border-top:1px solid var(--line);padding-top:8px;margin-top:40px;font-size:12px}
)css";

struct Component {
  const char* key;  // the data-score marker: the component as evaluation.json names it
  const char* title;
  const char* meaning;
  const Score* score;
};

std::vector<Component> quality_components(const EvaluationResult& result) {
  return {
      {"column_distribution_stability", "Column Distribution Stability",
       "Distribution: per column, how close the synthetic values are distributed to the training "
       "values (Jensen-Shannon distance on shared bins or categories).",
       &result.column_distribution},
      {"column_correlation_stability", "Column Correlation Stability",
       "Correlation: whether the synthetic table keeps the associations between pairs of "
       "columns (how far its correlation matrix lies from the training one).",
       &result.correlation.score},
      {"deep_structure_stability", "Deep Structure Stability",
       "Deep structure: both tables projected on the training table's first two principal "
       "components; how alike the projections are distributed.",
       &result.deep_structure.score},
      {"text_structure_similarity", "Text Structure Similarity",
       "Text structure: for free-text columns, whether sentence, word and character counts "
       "look alike.",
       &result.text_structure.score},
      {"text_semantic_similarity", "Text Semantic Similarity",
       "Text semantics: for free-text columns, how close the meaning of the synthetic text is "
       "to the training text (sentence embeddings).",
       &result.text_semantic},
  };
}

std::vector<Component> privacy_components(const EvaluationResult& result) {
  return {
      {"membership_inference_protection", "Membership Inference Protection",
       "Membership inference: whether an attacker holding a record can tell from the synthetic "
       "table that it was a training row rather than a holdout row (360 attacks).",
       &result.membership.score},
      {"attribute_inference_protection", "Attribute Inference Protection",
       "Attribute inference: whether an attacker who knows some columns of a training row "
       "(quasi-identifiers) can infer its other columns from the nearest synthetic rows.",
       &result.attribute.score},
      {"pii_replay", "PII Replay",
       "PII replay: whether personal identifiers of the training table (names, addresses, "
       "numbers) reappear verbatim in the synthetic table.",
       &result.pii_replay},
  };
}

Component quality_headline(const EvaluationResult& result) {
  return {"synthetic_quality_score", "Synthetic Quality Score",
          "How well the synthetic table keeps the statistical properties of the training table: "
          "the components below, combined.",
          &result.quality};
}

Component privacy_headline(const EvaluationResult& result) {
  return {"data_privacy_score", "Data Privacy Score",
          "How well the synthetic table protects the individual rows of the training table: the "
          "components below, combined.",
          &result.privacy};
}

// The marker a test reads back: which score, its value and its grade.
std::string score_marker(const char* key, const Score& score) {
  return std::string("<span class=\"score\" data-score=\"") + key + "\" data-value=\"" +
         score_value(score) + "\" data-grade=\"" + html_escape(score.grade) + "\">" +
         score_text(score) + "</span>";
}

std::string grade_badge(const Score& score) {
  return "<span class=\"grade " + grade_class(score.grade) + "\">" + html_escape(score.grade) +
         "</span>";
}

std::string notes_paragraph(const Score& score) {
  return score.notes.empty() ? "" : "<p class=\"note\">" + html_escape(score.notes) + "</p>";
}

// A section's own score line (no marker: each score is marked once, above).
std::string section_score(const Score& score) {
  return "<p>Score <strong>" + score_text(score) + "</strong> " + grade_badge(score) + "</p>" +
         notes_paragraph(score);
}

std::string distance_text(const std::optional<double>& distance) {
  return distance ? fixed(*distance, 4) : "n/a";
}

void append_head(std::string& out, const ReportContext& context) {
  append(out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n",
         "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n",
         "<title>Synthetic data evaluation: ", html_escape(context.synthetic_path),
         "</title>\n<style>", kStyle, "</style>\n</head>\n<body>\n<main>\n");
}

void append_header(std::string& out, const ReportContext& context) {
  const std::string holdout = context.holdout_path.empty()
                                  ? "none"
                                  : "<code>" + html_escape(context.holdout_path) + "</code>";
  append(out, "<header>\n<h1>Synthetic data evaluation</h1>\n",
         "<p class=\"subtitle\">Synthetic Quality Score and Data Privacy Score, computed as NeMo "
         "Safe Synthesizer computes them.</p>\n",
         "<p class=\"dp-notice\">", kDpNotice, "</p>\n<dl class=\"run\">",
         "<dt>Training table</dt><dd><code>", html_escape(context.training_path), "</code></dd>",
         "<dt>Holdout table</dt><dd>", holdout, "</dd>", "<dt>Synthetic table</dt><dd><code>",
         html_escape(context.synthetic_path), "</code></dd>", "<dt>Generated</dt><dd>",
         html_escape(context.generated_at), " by nss_hpc ", html_escape(context.version),
         "</dd></dl>\n");
  append(out, "<nav><a href=\"#scores\">Scores</a><a href=\"#statistics\">Dataset</a>",
         "<a href=\"#columns\">Columns</a><a href=\"#correlation\">Correlations</a>",
         "<a href=\"#deep-structure\">Deep structure</a><a href=\"#text\">Text</a>",
         "<a href=\"#membership\">Membership inference</a>",
         "<a href=\"#attribute\">Attribute inference</a>",
         "<a href=\"#unavailable\">Unavailable</a></nav>\n</header>\n");
}

void append_score_card(std::string& out, const Component& headline) {
  const Score& score = *headline.score;
  append(out, "<div class=\"score-card ", grade_class(score.grade), "\"><h2>", headline.title,
         "</h2><div class=\"big\">", score_marker(headline.key, score),
         "<span class=\"out-of\"> / 10</span></div>", grade_badge(score), notes_paragraph(score),
         "</div>\n");
}

void append_headline_scores(std::string& out, const EvaluationResult& result) {
  out += "<section id=\"scores\" class=\"scores\">\n";
  append_score_card(out, quality_headline(result));
  append_score_card(out, privacy_headline(result));
  out += "</section>\n";
}

void append_component_table(std::string& out, const std::vector<Component>& components) {
  out +=
      "<table><thead><tr><th>Component</th><th class=\"num\">Score</th><th>Grade</th>"
      "<th>What it measures</th></tr></thead><tbody>";
  for (const Component& component : components) {
    append(out, "<tr><td>", component.title, "</td><td class=\"num\">",
           score_marker(component.key, *component.score), "</td><td>",
           grade_badge(*component.score), "</td><td>", component.meaning, "</td></tr>");
  }
  out += "</tbody></table>";
}

void append_meanings(std::string& out, const EvaluationResult& result) {
  const Component quality = quality_headline(result), privacy = privacy_headline(result);
  const DatasetStatistics& statistics = result.statistics;
  append(out, "<section id=\"meaning\"><h2>What these scores mean</h2>",
         "<p>Scores run from 0 to 10. Grades: Excellent 8\u201310, Very Good 6\u20138, Good "
         "4\u20136, Moderate 2\u20134, Poor 0\u20132; a component that could not be computed is "
         "Unavailable and left out.</p>\n<div class=\"two\"><div><h3>",
         quality.title, " (SQS)</h3><p>", quality.meaning, "</p>");
  append_component_table(out, quality_components(result));
  append(out, "</div><div><h3>", privacy.title, " (DPS)</h3><p>", privacy.meaning, "</p>");
  append_component_table(out, privacy_components(result));
  append(out, "<p class=\"memorized\">Exact training rows reproduced: <strong>",
         thousands(statistics.memorized_rows), "</strong> of the ",
         thousands(statistics.synthetic_rows),
         " synthetic rows evaluated are copies of training rows.</p></div></div></section>\n");
}

std::string privacy_sentence(const ReportContext& context) {
  if (!context.training_known)
    return "How the model was trained is not known here (nss_evaluate --step STEP_DIR shows a "
           "private run's guarantee).";
  if (!context.trained_privately) return "Trained without differential privacy.";
  std::string text = "Trained with differential privacy: \u03b5 = " +
                     (context.epsilon ? significant(*context.epsilon) : "not recorded") +
                     ", \u03b4 = " + (context.delta ? significant(*context.delta) : "not recorded");
  if (!context.accountant.empty()) text += " (" + context.accountant + " accountant)";
  return text + ".";
}

void append_privacy_line(std::string& out, const ReportContext& context) {
  append(out, "<section id=\"privacy\"><h2>Differential privacy</h2><p class=\"privacy-line\">",
         html_escape(privacy_sentence(context)), "</p>");
  if (context.trained_privately) {
    out +=
        "<p class=\"caption\">The guarantee bounds what the trained model, and so the "
        "synthetic table, reveals about any one training record.</p>";
  }
  out += "</section>\n";
}

}  // namespace
namespace {

void append_statistics(std::string& out, const DatasetStatistics& statistics, bool has_holdout) {
  const std::string holdout = has_holdout ? thousands(statistics.holdout_rows) : "\u2014";
  append(out, "<section id=\"statistics\"><h2>Dataset statistics</h2>",
         "<table><thead><tr><th></th><th class=\"num\">Training</th>",
         "<th class=\"num\">Synthetic</th><th class=\"num\">Holdout</th></tr></thead><tbody>",
         "<tr><th>Rows read</th><td class=\"num\">", thousands(statistics.training_rows_read),
         "</td><td class=\"num\">", thousands(statistics.synthetic_rows_read),
         "</td><td class=\"num\">", holdout, "</td></tr>");
  append(out, "<tr><th>Rows evaluated</th><td class=\"num\">", thousands(statistics.training_rows),
         "</td><td class=\"num\">", thousands(statistics.synthetic_rows), "</td><td class=\"num\">",
         holdout, "</td></tr>", "<tr><th>Missing cells</th><td class=\"num\">",
         std::to_string(statistics.training_missing_percent), "%</td><td class=\"num\">",
         std::to_string(statistics.synthetic_missing_percent),
         "%</td><td class=\"num\">\u2014</td></tr></tbody></table>");
  append(out, "<p>Columns: <strong>", thousands(statistics.columns), "</strong> evaluated of ",
         thousands(statistics.columns_read), " read");
  if (statistics.columns < statistics.columns_read) out += " (the first ones in training order)";
  append(out, ". Rows beyond 5,000 are sampled down, as NeMo Safe Synthesizer samples them.</p>",
         "<p class=\"memorized\">Memorized rows: <strong>", thousands(statistics.memorized_rows),
         "</strong> synthetic rows are exact training rows");
  if (statistics.synthetic_rows > 0) {
    append(out, " (",
           percent(static_cast<double>(statistics.memorized_rows) /
                   static_cast<double>(statistics.synthetic_rows)),
           " of the synthetic rows evaluated)");
  }
  out += ".</p></section>\n";
}

std::string column_types(const ColumnDistribution& column) {
  return std::string(field_type_name(column.training_type)) + " / " +
         field_type_name(column.synthetic_type);
}

void append_column_summary(std::string& out, const std::vector<ColumnDistribution>& columns) {
  out +=
      "<table><thead><tr><th>Column</th><th>Type (training / synthetic)</th>"
      "<th class=\"num\">JS distance</th><th class=\"num\">Score</th><th>Grade</th></tr>"
      "</thead><tbody>";
  for (std::size_t k = 0; k < columns.size(); ++k) {
    const ColumnDistribution& column = columns[k];
    const std::string name = html_escape(column.name);
    append(out, "<tr><td><a href=\"#column-", std::to_string(k), "\">", name, "</a></td><td>",
           column_types(column), "</td><td class=\"num\">", distance_text(column.distance),
           "</td><td class=\"num column-score\" data-column=\"", name, "\" data-value=\"",
           score_value(column.score), "\">", score_text(column.score), "</td><td>",
           grade_badge(column.score), "</td></tr>");
  }
  out += "</tbody></table>";
}

// Which labels the chart left out, and the shares they hold on each side.
std::string left_out_caption(const ColumnDistribution& column,
                             const std::vector<std::size_t>& shown) {
  std::vector<bool> is_shown(column.labels.size(), false);
  for (std::size_t index : shown) is_shown[index] = true;
  double training = 0, synthetic = 0;
  for (std::size_t k = 0; k < column.labels.size(); ++k) {
    if (is_shown[k]) continue;
    training += share_at(column.training_share, k);
    synthetic += share_at(column.synthetic_share, k);
  }
  return "<p class=\"left-out\">Showing the " + std::to_string(shown.size()) +
         " labels with the largest shares; " + thousands(column.labels.size() - shown.size()) +
         " of " + thousands(column.labels.size()) + " left out (" + percent(training) +
         " of training, " + percent(synthetic) + " of synthetic).</p>";
}

void append_column_chart(std::string& out, const ColumnDistribution& column, std::size_t index) {
  append(out, "<figure class=\"column-chart\" id=\"column-", std::to_string(index),
         "\"><figcaption><strong>", html_escape(column.name), "</strong> <span class=\"meta\">",
         column_types(column), " \u00b7 JS distance ", distance_text(column.distance),
         " \u00b7 score ", score_text(column.score), "</span> ", grade_badge(column.score),
         "</figcaption>");
  if (column.labels.empty()) {
    out += "<p class=\"na\">No distribution to draw.</p>";
  } else {
    const std::vector<std::size_t> shown = labels_shown(column);
    out += distribution_bars_svg(column, shown);
    if (shown.size() < column.labels.size()) out += left_out_caption(column, shown);
  }
  append(out, notes_paragraph(column.score), "</figure>\n");
}

std::string series_legend() {
  return "<p><span class=\"swatch training\"></span>training"
         "<span class=\"swatch synthetic\"></span>synthetic</p>";
}

void append_columns(std::string& out, const EvaluationResult& result) {
  append(out, "<section id=\"columns\"><h2>Column distributions</h2>",
         section_score(result.column_distribution),
         "<p>Per column, the share of each category or bin in the training and the synthetic "
         "table; the Jensen-Shannon distance between them (0 = identical) and its score.</p>");
  if (result.columns.empty()) {
    out += "<p class=\"na\">No columns were compared.</p></section>\n";
    return;
  }
  append_column_summary(out, result.columns);
  append(out, series_legend(), "<div class=\"charts\">\n");
  for (std::size_t k = 0; k < result.columns.size(); ++k) {
    append_column_chart(out, result.columns[k], k);
  }
  out += "</div></section>\n";
}

void append_heatmap(std::string& out, const CorrelationResult& correlation, const char* title,
                    const std::vector<double>& values, ColourScale scale) {
  const std::size_t count = correlation.columns.size();
  append(out, "<figure class=\"heatmap\"><figcaption><strong>", title, "</strong></figcaption>");
  if (values.size() == count * count) {
    append(out, heatmap_svg(correlation.columns, values, scale, title), colour_legend_svg(scale));
  } else {
    out += "<p class=\"na\">Not available.</p>";
  }
  out += "</figure>\n";
}

void append_correlations(std::string& out, const CorrelationResult& correlation) {
  append(out, "<section id=\"correlation\"><h2>Column correlations</h2>",
         section_score(correlation.score),
         "<p>Pairwise associations between the tabular columns in each table, and their "
         "absolute difference; grey cells (n/a) are undefined, e.g. for a constant column.</p>");
  if (correlation.columns.empty()) {
    out += "<p class=\"na\">No tabular columns to correlate.</p></section>\n";
    return;
  }
  out += "<div class=\"heatmaps\">\n";
  append_heatmap(out, correlation, "Training", correlation.training, ColourScale::kCorrelation);
  append_heatmap(out, correlation, "Synthetic", correlation.synthetic, ColourScale::kCorrelation);
  append_heatmap(out, correlation, "Absolute difference", correlation.difference,
                 ColourScale::kDifference);
  out += "</div></section>\n";
}

std::string sample_caption(const char* name, std::size_t shown, std::size_t total) {
  if (shown == total) return "all " + thousands(total) + " " + name + " points";
  return thousands(shown) + " of " + thousands(total) + " " + name + " points (evenly spaced)";
}

void append_deep_structure(std::string& out, const DeepStructureResult& deep) {
  append(out, "<section id=\"deep-structure\"><h2>Deep structure</h2>", section_score(deep.score),
         "<p>Both tables projected on the training table's first two principal components. "
         "Jensen-Shannon distance of the projections: PC1 ",
         distance_text(deep.component_distances[0]), ", PC2 ",
         distance_text(deep.component_distances[1]), ".</p>");
  const auto training = sample_points(deep.training_points);
  const auto synthetic = sample_points(deep.synthetic_points);
  const std::string svg = scatter_svg(training, synthetic);
  if (svg.empty()) {
    out += "<p class=\"na\">No projected points to draw.</p></section>\n";
    return;
  }
  append(out, "<figure class=\"scatter\">", series_legend(), svg, "<p class=\"caption\">Showing ",
         sample_caption("training", training.size(), deep.training_points.size()), " and ",
         sample_caption("synthetic", synthetic.size(), deep.synthetic_points.size()),
         ".</p></figure></section>\n");
}

void append_text(std::string& out, const EvaluationResult& result) {
  const TextStructureResult& structure = result.text_structure;
  append(out, "<section id=\"text\"><h2>Text columns</h2><h3>Text Structure Similarity</h3>",
         section_score(structure.score));
  if (structure.columns.empty()) {
    out += "<p class=\"na\">No free-text columns were evaluated.</p>";
  } else {
    out +=
        "<table><thead><tr><th>Column</th><th class=\"num\">Score</th><th>Grade</th></tr>"
        "</thead><tbody>";
    for (const TextColumnStructure& column : structure.columns) {
      append(out, "<tr><td>", html_escape(column.name), "</td><td class=\"num\">",
             score_text(column.score), "</td><td>", grade_badge(column.score), "</td></tr>");
    }
    out += "</tbody></table>";
  }
  append(out, "<h3>Text Semantic Similarity</h3>", section_score(result.text_semantic),
         "</section>\n");
}

}  // namespace
namespace {

void append_thresholds(std::string& out, const std::vector<MembershipResult::Threshold>& rows) {
  if (rows.empty()) return;
  out +=
      "<table><thead><tr><th class=\"num\">Threshold</th><th class=\"num\">True positives</th>"
      "<th class=\"num\">False positives</th></tr></thead><tbody>";
  for (const MembershipResult::Threshold& row : rows) {
    append(out, "<tr><td class=\"num\">", significant(row.threshold), "</td><td class=\"num\">",
           std::to_string(row.true_positives), "</td><td class=\"num\">",
           std::to_string(row.false_positives), "</td></tr>");
  }
  out += "</tbody></table>";
}

void append_membership(std::string& out, const MembershipResult& membership) {
  append(out, "<section id=\"membership\"><h2>Membership inference</h2>",
         section_score(membership.score),
         "<p>10 runs of 36 attacks each try to tell training rows from holdout rows by their "
         "distance to the synthetic rows; each attack is graded by how little it gains over a "
         "guess.</p>");
  if (membership.attack_grades.empty()) {
    out += "<p class=\"na\">No attacks were run.</p>";
  } else {
    int attacks = 0;
    for (const auto& grade : membership.attack_grades) attacks += grade.second;
    append(out, "<div class=\"two\"><figure><figcaption><strong>Grades of the ",
           std::to_string(attacks), " attacks</strong></figcaption>",
           grade_bars_svg(membership.attack_grades), "</figure><div>");
    if (!membership.thresholds.empty()) {
      out +=
          "<h3>Attacks' thresholds</h3><p class=\"caption\">How many training rows (true "
          "positives) and holdout rows (false positives) each threshold flags.</p>";
    }
    append_thresholds(out, membership.thresholds);
    out += "</div></div>";
  }
  out += "</section>\n";
}

void append_attribute(std::string& out, const AttributeResult& attribute) {
  append(
      out, "<section id=\"attribute\"><h2>Attribute inference</h2>", section_score(attribute.score),
      "<p>", thousands(attribute.attacked_rows), " training rows attacked with ",
      std::to_string(attribute.quasi_identifiers),
      " quasi-identifier columns known: per column, how often the nearest synthetic rows "
      "give its value, its entropy weight, and the risk as a 0\u201310 score (10 = no risk).</p>");
  if (attribute.columns.empty()) {
    out += "<p class=\"na\">No columns were attacked.</p></section>\n";
    return;
  }
  out +=
      "<table><thead><tr><th>Column</th><th class=\"num\">Accuracy</th>"
      "<th class=\"num\">Weight</th><th class=\"num\">Risk score</th><th>Grade</th></tr>"
      "</thead><tbody>";
  for (const AttributeResult::ColumnRisk& column : attribute.columns) {
    Score risk;  // only to draw the grade's badge
    risk.grade = column.grade;
    append(out, "<tr><td>", html_escape(column.name), "</td><td class=\"num\">",
           percent(column.accuracy), "</td><td class=\"num\">", fixed(column.weight, 3),
           "</td><td class=\"num\">", fixed(column.risk, 1), "</td><td>", grade_badge(risk),
           "</td></tr>");
  }
  out += "</tbody></table></section>\n";
}

// Unavailable components with why, then caveats on the computed ones.
void append_unavailable(std::string& out, const EvaluationResult& result) {
  std::vector<Component> all = {quality_headline(result), privacy_headline(result)};
  for (const auto& group : {quality_components(result), privacy_components(result)}) {
    all.insert(all.end(), group.begin(), group.end());
  }
  std::string unavailable, caveats;
  for (const Component& component : all) {
    const Score& score = *component.score;
    const std::string notes = score.notes.empty() ? "no reason recorded" : score.notes;
    if (!score.available()) {
      append(unavailable, "<li><strong>", component.title, "</strong>: ", html_escape(notes),
             "</li>");
    } else if (!score.notes.empty()) {
      append(caveats, "<li><strong>", component.title, "</strong>: ", html_escape(notes), "</li>");
    }
  }
  out += "<section id=\"unavailable\"><h2>Unavailable components</h2>";
  out +=
      unavailable.empty() ? "<p>Every component was computed.</p>" : "<ul>" + unavailable + "</ul>";
  if (!caveats.empty()) append(out, "<h3>Caveats</h3><ul>", caveats, "</ul>");
  out += "</section>\n";
}

void append_notes(std::string& out, const std::vector<std::string>& notes) {
  if (notes.empty()) return;
  out += "<section id=\"notes\"><h2>Notes</h2><ul>";
  for (const std::string& note : notes) append(out, "<li>", html_escape(note), "</li>");
  out += "</ul></section>\n";
}

void append_footer(std::string& out, const ReportContext& context) {
  append(out, "<footer>Generated by nss_hpc ", html_escape(context.version), " at ",
         html_escape(context.generated_at),
         ". A self-contained page: no script and nothing loaded from elsewhere.</footer>\n",
         "</main>\n</body>\n</html>\n");
}

}  // namespace

std::string report_html(const EvaluationResult& result, const ReportContext& context) {
  std::string out;
  append_head(out, context);
  append_header(out, context);
  append_headline_scores(out, result);
  append_meanings(out, result);
  append_privacy_line(out, context);
  const bool has_holdout = !context.holdout_path.empty() || result.statistics.holdout_rows > 0;
  append_statistics(out, result.statistics, has_holdout);
  append_columns(out, result);
  append_correlations(out, result.correlation);
  append_deep_structure(out, result.deep_structure);
  append_text(out, result);
  append_membership(out, result.membership);
  append_attribute(out, result.attribute);
  append_pii_section(out, result.pii_replay_data, context.pii);
  append_unavailable(out, result);
  append_notes(out, context.notes);
  append_footer(out, context);
  return out;
}

}  // namespace nss::evaluate
