// report.html from a hand-made EvaluationResult: self-contained (no URL, no
// script), every score and grade shown and marked, data escaped, tags
// balanced, the differential-privacy notice present, the page deterministic.
// NSS_REPORT_HTML_SAMPLE=PATH writes the rendered page to PATH to look at.
#include "evaluate/report_html.h"

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <regex>

#include <gtest/gtest.h>

namespace nss::evaluate {
namespace {

const std::string kOddName = "a<b & \"c\"";  // a column name HTML would misread
const std::string kOddNameEscaped = "a&lt;b &amp; &quot;c&quot;";
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

ColumnDistribution numeric_column() {
  ColumnDistribution column;
  column.name = "age";
  column.training_type = column.synthetic_type = FieldType::kNumeric;
  column.distance = 0.0312;
  column.score = finalize(0.0312, 8.44);
  column.labels = {"[18, 30)", "[30, 45)", "[45, 60)", "[60, 90]"};
  column.training_share = {0.25, 0.35, 0.3, 0.1};
  column.synthetic_share = {0.2, 0.4, 0.3, 0.1};
  return column;
}

// 60 categories: more than a chart shows.
ColumnDistribution many_label_column() {
  ColumnDistribution column;
  column.name = kOddName;
  column.training_type = column.synthetic_type = FieldType::kCategorical;
  column.distance = 0.2;
  column.score = finalize(0.2, 6.1);
  for (int k = 0; k < 60; ++k) {
    column.labels.push_back(k == 0 ? "<script>x</script>" : "city " + std::to_string(k));
    column.training_share.push_back(1.0 / 60);
    column.synthetic_share.push_back(k < 30 ? 1.5 / 60 : 0.5 / 60);
  }
  return column;
}

ColumnDistribution text_column() {
  ColumnDistribution column;
  column.name = "it's free text";
  column.training_type = column.synthetic_type = FieldType::kText;
  column.score = unavailable("not comparable: <text> column");
  return column;
}

CorrelationResult correlation() {
  CorrelationResult result;
  result.score = finalize(0.05, 9.0);
  result.columns = {"age", kOddName, "flag"};
  result.training = {1, 0.5, kNaN, 0.5, 1, -0.2, kNaN, -0.2, 1};
  result.synthetic = {1, 0.4, kNaN, 0.4, 1, -0.3, kNaN, -0.3, 1};
  result.difference = {0, 0.1, kNaN, 0.1, 0, 0.1, kNaN, 0.1, 0};
  return result;
}

DeepStructureResult deep_structure() {
  DeepStructureResult result;
  result.score = finalize(0.1, 7.9);
  for (int k = 0; k < 3000; ++k) result.training_points.push_back({std::sin(k), std::cos(k * 0.7)});
  for (int k = 0; k < 10; ++k) result.synthetic_points.push_back({0.1 * k, -0.1 * k});
  result.synthetic_points.push_back({kNaN, 1.0});  // not drawn
  result.component_distances = {0.0421, std::nullopt};
  return result;
}

MembershipResult membership() {
  MembershipResult result;
  result.score = finalize(0.6, 6.2);
  result.attack_grades = {
      {"Excellent", 200}, {"Very Good", 100}, {"Good", 40}, {"Moderate", 15}, {"Poor", 5}};
  result.thresholds = {{0.05, 120, 80}, {0.1, 300, 260}};
  return result;
}

AttributeResult attribute() {
  AttributeResult result;
  result.score = finalize(0.45, 5.5);
  result.columns = {{"age", 0.12, 0.4, 8.8, "Excellent"}, {kOddName, 0.6, 0.6, 3.1, "Moderate"}};
  result.attacked_rows = 1234;
  result.quasi_identifiers = 3;
  return result;
}

EvaluationResult sample_result() {
  EvaluationResult result;
  result.statistics = {4000, 4000, 1000, 3, 12345, 4000, 3, 2, 3, 7};
  result.columns = {numeric_column(), many_label_column(), text_column()};
  result.column_distribution = finalize(0.1, 7.27);
  result.correlation = correlation();
  result.deep_structure = deep_structure();
  result.text_structure.score = unavailable("No text columns & nothing to measure.");
  result.text_semantic = unavailable("needs a sentence-embedding model");
  result.quality = finalize(0.0, 8.06);
  result.membership = membership();
  result.attribute = attribute();
  result.pii_replay = unavailable("PII replay needs the PII replacer's <column statistics>");
  result.privacy = finalize(0.0, 5.85);
  return result;
}

ReportContext sample_context(bool trained_privately) {
  ReportContext context;
  context.training_path = "data/train <v2>.csv";
  context.holdout_path = trained_privately ? "data/holdout.csv" : "";
  context.synthetic_path = "out/synthetic.csv";
  context.generated_at = "2026-12-01T10:00:00Z";
  context.version = "0.1.0";
  context.training_known = true;
  context.trained_privately = trained_privately;
  if (trained_privately) {
    context.epsilon = 8.0;
    context.delta = 1e-5;
    context.accountant = "prv";
  }
  context.notes = {"sampled & shuffled"};
  return context;
}

std::size_t occurrences(const std::string& text, const std::string& what) {
  std::size_t count = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++count;
  return count;
}

// Empty when every <svg>, <table>, <div> and <section> closes, in order;
// else what is wrong.
std::string unbalanced_tags(const std::string& html) {
  static const std::regex kTag(R"(<(/?)(svg|table|div|section)[\s>])");
  std::vector<std::string> open;
  for (auto it = std::sregex_iterator(html.begin(), html.end(), kTag); it != std::sregex_iterator();
       ++it) {
    const std::string name = (*it)[2];
    if ((*it)[1].length() == 0) {
      open.push_back(name);
    } else if (open.empty() || open.back() != name) {
      return "</" + name + "> at " + std::to_string(it->position()) + " closes nothing open";
    } else {
      open.pop_back();
    }
  }
  return open.empty() ? "" : "<" + open.back() + "> never closed";
}

TEST(ReportHtml, TagCheckerFindsUnbalancedTags) {
  EXPECT_EQ(unbalanced_tags("<div><svg></svg><table></table></div>"), "");
  EXPECT_NE(unbalanced_tags("<section><div></section>"), "");
  EXPECT_NE(unbalanced_tags("<svg viewBox=\"0 0 1 1\">"), "");
}

TEST(ReportHtml, IsAValidSelfContainedPage) {
  const std::string html = report_html(sample_result(), sample_context(true));
  EXPECT_EQ(html.rfind("<!DOCTYPE html>\n<html lang=\"en\">", 0), 0u);
  EXPECT_NE(html.find("<meta charset=\"utf-8\">"), std::string::npos);
  EXPECT_NE(html.find("<title>"), std::string::npos);
  EXPECT_EQ(unbalanced_tags(html), "");
  EXPECT_EQ(html.find("http://"), std::string::npos);
  EXPECT_EQ(html.find("https://"), std::string::npos);
  EXPECT_EQ(html.find("src="), std::string::npos);
  EXPECT_EQ(html.find("url("), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_EQ(html.find("=\"//"), std::string::npos);
  const std::size_t links = occurrences(html, "href=");
  EXPECT_GT(links, 0u);
  EXPECT_EQ(occurrences(html, "href=\"#"), links) << "every href is an anchor on the page";
}

TEST(ReportHtml, ShowsAndMarksEveryScoreAndGrade) {
  const std::string html = report_html(sample_result(), sample_context(true));
  const std::vector<std::pair<std::string, std::string>> marked = {
      {"synthetic_quality_score", "8.1\" data-grade=\"Excellent\""},
      {"data_privacy_score", "5.8\" data-grade=\"Good\""},
      {"column_distribution_stability", "7.3\" data-grade=\"Very Good\""},
      {"column_correlation_stability", "9.0\" data-grade=\"Excellent\""},
      {"deep_structure_stability", "7.9\" data-grade=\"Very Good\""},
      {"text_structure_similarity", "\" data-grade=\"Unavailable\""},
      {"text_semantic_similarity", "\" data-grade=\"Unavailable\""},
      {"membership_inference_protection", "6.2\" data-grade=\"Very Good\""},
      {"attribute_inference_protection", "5.5\" data-grade=\"Good\""},
      {"pii_replay", "\" data-grade=\"Unavailable\""}};
  for (const auto& [key, value_and_grade] : marked) {
    const std::string marker = "class=\"score\" data-score=\"" + key + "\" data-value=\"";
    EXPECT_EQ(occurrences(html, marker), 1u) << key;
    EXPECT_NE(html.find(marker + value_and_grade), std::string::npos) << key;
  }
  EXPECT_NE(html.find(">8.1</span><span class=\"out-of\">"), std::string::npos);
  EXPECT_NE(html.find(">5.8</span><span class=\"out-of\">"), std::string::npos);
  EXPECT_NE(html.find("data-value=\"8.4\">8.4</td>"), std::string::npos) << "column score";
  for (const char* grade : {"Excellent", "Very Good", "Good", "Moderate", "Unavailable"}) {
    EXPECT_NE(html.find(std::string(">") + grade + "</span>"), std::string::npos) << grade;
  }
}

TEST(ReportHtml, EscapesEveryStringFromTheData) {
  const std::string html = report_html(sample_result(), sample_context(true));
  EXPECT_GT(occurrences(html, kOddNameEscaped), 5u);
  EXPECT_EQ(html.find("a<b"), std::string::npos);
  EXPECT_EQ(html.find("\"c\""), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;x&lt;/script&gt;"), std::string::npos);
  EXPECT_NE(html.find("it&#39;s free text"), std::string::npos);
  EXPECT_NE(html.find("data/train &lt;v2&gt;.csv"), std::string::npos);
  EXPECT_NE(html.find("replacer&#39;s &lt;column statistics&gt;"), std::string::npos);
  EXPECT_EQ(html_escape("x\x01y\xff"), "x\uFFFDy\uFFFD");
  EXPECT_EQ(html_escape("\xC0\x80|\xED\xA0\x80|\xF4\x90\x80\x80|\xE2\x82"),
            "\uFFFD\uFFFD|\uFFFD\uFFFD\uFFFD|\uFFFD\uFFFD\uFFFD\uFFFD|\uFFFD");  // one per maximal
                                                                                 // subpart
  EXPECT_EQ(html_escape("caf\u00e9 \u2014 ok"), "caf\u00e9 \u2014 ok");
}

TEST(ReportHtml, SaysWhatIsUnavailableAndWhy) {
  const std::string html = report_html(sample_result(), sample_context(true));
  const std::string section = html.substr(html.find("<section id=\"unavailable\""));
  EXPECT_NE(section.find("PII Replay</strong>: PII replay needs"), std::string::npos);
  EXPECT_NE(section.find("Text Semantic Similarity</strong>: needs a sentence-embedding model"),
            std::string::npos);
  EXPECT_NE(section.find("No text columns &amp; nothing to measure."), std::string::npos);
  EXPECT_NE(html.find("not comparable: &lt;text&gt; column"), std::string::npos);
  EXPECT_NE(html.find("sampled &amp; shuffled"), std::string::npos);
}

TEST(ReportHtml, StatesThePrivacyOfTheTrainingAndOfTheReport) {
  const std::string notice =
      "This report reads the training table (private data) and is itself not covered by any "
      "differential-privacy guarantee \u2014 share it like the training data.";
  const std::string with_dp = report_html(sample_result(), sample_context(true));
  const std::string without_dp = report_html(sample_result(), sample_context(false));
  EXPECT_NE(with_dp.find(notice), std::string::npos);
  EXPECT_NE(without_dp.find(notice), std::string::npos);
  EXPECT_NE(with_dp.find("\u03b5 = 8, \u03b4 = 1e-05 (prv accountant)"), std::string::npos);
  EXPECT_NE(without_dp.find("Trained without differential privacy."), std::string::npos);
  EXPECT_EQ(without_dp.find("\u03b5 = "), std::string::npos);
}

TEST(ReportHtml, DrawsChartsWithinTheirLimits) {
  const std::string html = report_html(sample_result(), sample_context(true));
  EXPECT_NE(html.find("Showing the 40 labels with the largest shares; 20 of 60 left out"),
            std::string::npos);
  EXPECT_EQ(occurrences(html, "<circle"), 2000u + 10u);
  EXPECT_NE(html.find("2,000 of 3,000 training points"), std::string::npos);
  EXPECT_EQ(occurrences(html, "<figure class=\"heatmap\">"), 3u);
  EXPECT_EQ(occurrences(html, ": n/a</title>"), 3u * 2u);       // two NaN cells a matrix
  EXPECT_NE(html.find("fill=\"#bdbdbd\""), std::string::npos);  // grey n/a cells
  EXPECT_NE(html.find("memorized"), std::string::npos);
  EXPECT_NE(html.find("<strong>7</strong> synthetic rows are exact training rows"),
            std::string::npos);
}

TEST(ReportHtml, RendersAnEmptyResult) {
  const std::string html = report_html(EvaluationResult{}, ReportContext{});
  EXPECT_EQ(unbalanced_tags(html), "");
  EXPECT_NE(html.find("data-score=\"synthetic_quality_score\" data-value=\"\""), std::string::npos);
}

// NeMo Safe Synthesizer's limits: 250 columns, 5000 rows a table.
TEST(ReportHtml, StaysCompactAtTheLargestEvaluation) {
  EvaluationResult result = sample_result();
  const std::size_t columns = 250;
  result.columns.assign(columns, many_label_column());
  result.correlation.columns.assign(columns, "a fairly long column name");
  result.correlation.training.assign(columns * columns, 0.3);
  result.correlation.synthetic.assign(columns * columns, kNaN);
  result.correlation.difference.assign(columns * columns, 0.7);
  result.deep_structure.training_points.assign(5000, {1.0, 2.0});
  result.deep_structure.synthetic_points.assign(5000, {2.0, 1.0});
  const std::string html = report_html(result, sample_context(false));
  EXPECT_EQ(unbalanced_tags(html), "");
  EXPECT_LT(html.size(), 16u << 20) << "bytes";
  EXPECT_EQ(occurrences(html, "<circle"), 4000u);
}

TEST(ReportHtml, IsDeterministic) {
  const std::string first = report_html(sample_result(), sample_context(true));
  EXPECT_EQ(first, report_html(sample_result(), sample_context(true)));
  if (const char* path = std::getenv("NSS_REPORT_HTML_SAMPLE")) std::ofstream(path) << first;
}

}  // namespace
}  // namespace nss::evaluate
