#include "evaluate/evaluation_json.h"

namespace nss::evaluate {
namespace {

using nlohmann::ordered_json;

ordered_json optional_number(const std::optional<double>& value) {
  return value ? ordered_json(*value) : ordered_json(nullptr);
}

ordered_json summary(const EvaluationResult& r) {
  return {{"synthetic_data_quality_score", optional_number(r.quality.score)},
          {"column_correlation_stability_score", optional_number(r.correlation.score.score)},
          {"deep_structure_stability_score", optional_number(r.deep_structure.score.score)},
          {"column_distribution_stability_score", optional_number(r.column_distribution.score)},
          {"text_semantic_similarity_score", optional_number(r.text_semantic.score)},
          {"text_structure_similarity_score", optional_number(r.text_structure.score.score)},
          {"data_privacy_score", optional_number(r.privacy.score)},
          {"membership_inference_protection_score", optional_number(r.membership.score.score)},
          {"attribute_inference_protection_score", optional_number(r.attribute.score.score)}};
}

ordered_json components(const EvaluationResult& r) {
  return {{"Attribute Inference Protection", score_json(r.attribute.score)},
          {"Membership Inference Protection", score_json(r.membership.score)},
          {"Data Privacy Score", score_json(r.privacy)},
          {"PII Replay", score_json(r.pii_replay)},
          {"Column Distribution Stability", score_json(r.column_distribution)},
          {"Column Correlation Stability", score_json(r.correlation.score)},
          {"Deep Structure Stability", score_json(r.deep_structure.score)},
          {"Text Semantic Similarity", score_json(r.text_semantic)},
          {"Text Structure Similarity", score_json(r.text_structure.score)},
          {"Synthetic Quality Score", score_json(r.quality)}};
}

ordered_json columns(const EvaluationResult& r) {
  ordered_json out = ordered_json::array();
  for (const ColumnDistribution& c : r.columns)
    out.push_back({{"name", c.name},
                   {"training_type", field_type_name(c.training_type)},
                   {"synthetic_type", field_type_name(c.synthetic_type)},
                   {"distribution_distance", optional_number(c.distance)},
                   {"distribution_stability", score_json(c.score)}});
  return out;
}

ordered_json statistics(const DatasetStatistics& s) {
  return {{"training_rows", s.training_rows},
          {"training_cols", s.columns},
          {"training_missing", s.training_missing_percent},
          {"synthetic_rows", s.synthetic_rows},
          {"synthetic_cols", s.columns},
          {"synthetic_missing", s.synthetic_missing_percent},
          {"memorized_lines", s.memorized_rows},
          {"holdout_rows", s.holdout_rows},
          {"training_rows_read", s.training_rows_read},
          {"synthetic_rows_read", s.synthetic_rows_read},
          {"columns_read", s.columns_read}};
}

ordered_json attribute_details(const AttributeResult& a) {
  ordered_json columns = ordered_json::array();
  for (const auto& c : a.columns)
    columns.push_back({{"name", c.name},
                       {"accuracy", c.accuracy},
                       {"entropy_weight", c.weight},
                       {"risk", c.risk},
                       {"grade", c.grade}});
  return {{"quasi_identifiers", a.quasi_identifiers},
          {"attacked_rows", a.attacked_rows},
          {"columns", columns}};
}

ordered_json membership_details(const MembershipResult& m) {
  ordered_json grades = ordered_json::object(), thresholds = ordered_json::array();
  for (const auto& [grade, count] : m.attack_grades) grades[grade] = count;
  for (const auto& t : m.thresholds)
    thresholds.push_back({{"threshold", t.threshold},
                          {"true_positives", t.true_positives},
                          {"false_positives", t.false_positives}});
  return {{"attack_grades", grades}, {"thresholds", thresholds}};
}

// NSS's PIIReplay fields, null without a PII report.
ordered_json pii_replay(const std::optional<PiiReplayResult>& replay) {
  if (!replay) return nullptr;
  ordered_json data = ordered_json::array();
  for (const PiiReplayDatum& d : replay->pii_replay_data)
    data.push_back({{"column_name", d.column_name},
                    {"column_assigned_type", d.column_assigned_type},
                    {"pii_type", d.pii_type},
                    {"total_training_data", d.total_training_data},
                    {"unique_training_data", d.unique_training_data},
                    {"total_synthetic_data", d.total_synthetic_data},
                    {"unique_synthetic_data", d.unique_synthetic_data},
                    {"unique_synthetic_data_percentage", d.unique_synthetic_data_percentage}});
  return {{"training_total_records", replay->training_total_records},
          {"synthetic_total_records", replay->synthetic_total_records},
          {"pii_replay_data", data}};
}

}  // namespace

ordered_json score_json(const Score& score) {
  return {{"raw_score", optional_number(score.raw)},
          {"grade", score.grade},
          {"score", optional_number(score.score)},
          {"notes", score.notes.empty() ? ordered_json(nullptr) : ordered_json(score.notes)}};
}

ordered_json evaluation_json(const EvaluationResult& result) {
  ordered_json out;
  out["summary"] = summary(result);
  out["components"] = components(result);
  out["dataset_statistics"] = statistics(result.statistics);
  out["columns"] = columns(result);
  out["correlation_columns"] = result.correlation.columns;
  out["deep_structure_component_distances"] = {
      optional_number(result.deep_structure.component_distances[0]),
      optional_number(result.deep_structure.component_distances[1])};
  out["membership_inference"] = membership_details(result.membership);
  out["attribute_inference"] = attribute_details(result.attribute);
  out["pii_replay"] = pii_replay(result.pii_replay_data);
  return out;
}

}  // namespace nss::evaluate
