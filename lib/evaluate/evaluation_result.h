// Everything one evaluation measured: each component's score (named as
// NeMo Safe Synthesizer names them) and the details the report draws. The
// metrics fill it; evaluation.json and report.html are written from it.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "evaluate/field_type.h"
#include "evaluate/score.h"

namespace nss::evaluate {

/// One column's distributions, training against synthetic, on shared bins
/// (numeric) or categories (labels in the order drawn).
struct ColumnDistribution {
  std::string name;
  FieldType training_type = FieldType::kEmpty, synthetic_type = FieldType::kEmpty;
  std::optional<double> distance;  // Jensen-Shannon; empty: not comparable
  Score score;                     // the distance on the distribution curve
  std::vector<std::string> labels;
  std::vector<double> training_share, synthetic_share;  // per label, each summing to 1
};

/// The correlation matrices (row-major, columns x columns) of the tabular
/// columns; NaN where undefined.
struct CorrelationResult {
  Score score;
  std::vector<std::string> columns;
  std::vector<double> training, synthetic, difference;
};

/// Both tables projected on the training table's first two principal
/// components.
struct DeepStructureResult {
  Score score;
  std::vector<std::array<double, 2>> training_points, synthetic_points;
  std::array<std::optional<double>, 2> component_distances;
};

struct TextColumnStructure {
  std::string name;
  Score score;
};

struct TextStructureResult {
  Score score;
  std::vector<TextColumnStructure> columns;
};

/// Membership inference: 10 runs of 36 attacks on holdout and training rows.
struct MembershipResult {
  Score score;
  // How many of the 360 attacks each grade got ("Excellent" ... "Poor").
  std::vector<std::pair<std::string, int>> attack_grades;
  struct Threshold {
    double threshold = 0;
    long true_positives = 0, false_positives = 0;
  };
  std::vector<Threshold> thresholds;
};

/// Attribute inference: per column, how often the nearest synthetic rows
/// of an attacker's quasi-identifiers give the column's value.
struct AttributeResult {
  Score score;
  struct ColumnRisk {
    std::string name;
    double accuracy = 0;  // share of attacks that guessed it
    double weight = 0;    // entropy weight
    double risk = 0;      // 0-10, 10 = no risk
    std::string grade;
  };
  std::vector<ColumnRisk> columns;
  std::size_t attacked_rows = 0;
  int quasi_identifiers = 0;
};

struct DatasetStatistics {
  std::size_t training_rows = 0, synthetic_rows = 0, holdout_rows = 0, columns = 0;
  std::size_t training_rows_read = 0, synthetic_rows_read = 0, columns_read = 0;
  int training_missing_percent = 0, synthetic_missing_percent = 0;
  std::size_t memorized_rows = 0;  // synthetic rows that are training rows
};

/// One column's replay, under NSS's field names.
struct PiiReplayDatum {
  std::string column_name;
  std::string column_assigned_type;
  std::string pii_type;
  std::int64_t total_training_data = 0;    // non-missing training cells
  std::int64_t unique_training_data = 0;   // their distinct values
  std::int64_t total_synthetic_data = 0;   // synthetic rows holding one of them
  std::int64_t unique_synthetic_data = 0;  // the distinct values among those
  double unique_synthetic_data_percentage = 0;
};

struct PiiReplayResult {
  std::int64_t training_total_records = 0;
  std::int64_t synthetic_total_records = 0;
  std::vector<PiiReplayDatum> pii_replay_data;
};

struct EvaluationResult {
  DatasetStatistics statistics;
  std::vector<ColumnDistribution> columns;
  Score column_distribution;
  CorrelationResult correlation;
  DeepStructureResult deep_structure;
  TextStructureResult text_structure;
  Score text_semantic;
  Score quality;  // Synthetic Quality Score
  MembershipResult membership;
  AttributeResult attribute;
  Score pii_replay;                                // never scored, as NSS
  std::optional<PiiReplayResult> pii_replay_data;  // with a PII report
  Score privacy;                                   // Data Privacy Score
};

}  // namespace nss::evaluate
