#include "evaluate/membership_inference.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>

#include "evaluate/field_type.h"
#include "evaluate/nearest_neighbors.h"
#include "evaluate/privacy_encoding.h"
#include "evaluate/score.h"

namespace nss::evaluate {
namespace {

constexpr int kRuns = 10;
constexpr std::size_t kTrainingRowsPerHoldoutRow = 10;  // training rows sampled: 10 runs' worth
constexpr std::uint32_t kTrainingSampleSeed = 1;
constexpr double kThresholds[] = {0.4, 0.3, 0.2, 0.1};
constexpr double kProportions[] = {0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0};
constexpr std::size_t kQuantiles = 1000;

int bit_length(unsigned __int128 x) {
  int bits = 0;
  for (; x != 0; x >>= 1) ++bits;
  return bits;
}

// numerator * 2^exponent / denominator rounded to the nearest double, ties
// to even: a quotient of ~120 bits rounded to 53, the remainder breaking ties.
double rounded_quotient(unsigned __int128 numerator, std::size_t denominator, int exponent) {
  const int shift = 120 - bit_length(numerator);
  const unsigned __int128 scaled = numerator << shift;
  const unsigned __int128 quotient = scaled / denominator;
  const bool inexact = scaled % denominator != 0;
  const int drop = bit_length(quotient) - 53;
  unsigned __int128 mantissa = quotient >> drop;
  const unsigned __int128 rest = quotient & ((static_cast<unsigned __int128>(1) << drop) - 1);
  const unsigned __int128 half = static_cast<unsigned __int128>(1) << (drop - 1);
  if (rest > half || (rest == half && (inexact || (mantissa & 1)))) ++mantissa;
  return std::ldexp(static_cast<double>(mantissa), drop - shift + exponent);
}

// An attack's grade and points from its precision and accuracy (each
// rounded to 0.1): both at most 0.5 is Excellent, both above 0.8 Poor.
std::pair<const char*, double> attack_grade(double precision, double accuracy) {
  if (precision <= 0.5 && accuracy <= 0.5) return {"Excellent", 3};
  if ((precision <= 0.8 && accuracy <= 0.5) || (precision <= 0.5 && accuracy <= 0.8))
    return {"Very Good", 2.5};
  if (precision <= 0.8 && accuracy <= 0.8) return {"Good", 2};
  if (precision <= 0.8 || accuracy <= 0.8) return {"Moderate", 1.5};
  return {"Poor", 1};
}

void count_grade(MembershipResult& result, const char* grade) {
  for (auto& [name, count] : result.attack_grades)
    if (name == grade) ++count;
}

MembershipResult empty_result() {
  MembershipResult result;
  for (const char* grade : {"Excellent", "Very Good", "Good", "Moderate", "Poor"})
    result.attack_grades.emplace_back(grade, 0);
  for (const double threshold : {0.1, 0.2, 0.3, 0.4})
    result.thresholds.push_back({threshold, 0, 0});
  return result;
}

// The training rows the runs draw from: training.sample(10 * holdout rows,
// random_state=1) when training has more rows, else all of them in order.
std::vector<std::size_t> candidate_training_rows(std::size_t training_rows,
                                                 std::size_t holdout_rows) {
  const std::size_t needed = kTrainingRowsPerHoldoutRow * holdout_rows;
  if (training_rows > needed) return sample_rows(training_rows, needed, kTrainingSampleSeed);
  std::vector<std::size_t> all(training_rows);
  std::iota(all.begin(), all.end(), std::size_t{0});
  return all;
}

// The text columns that make NSS load a sentence-embedding model: typed
// text in the training table, or in the training rows MIA samples.
std::vector<std::string> text_columns(const EvaluationTables& tables,
                                      const std::vector<std::size_t>& training_rows) {
  std::vector<std::string> names;
  const bool sampled = training_rows.size() < tables.training.rows;
  const Table subset = sampled ? take_rows(tables.training, training_rows) : Table{};
  for (std::size_t c = 0; c < tables.training.columns.size(); ++c) {
    const bool text = tables.training_types[c] == FieldType::kText ||
                      (sampled && describe_field(subset.columns[c]) == FieldType::kText);
    if (text) names.push_back(tables.training.columns[c].name);
  }
  return names;
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& name : names) out += (out.empty() ? "" : ", ") + name;
  return out;
}

// The attack rows of run `run`: the training rows [start, end) of the
// candidates (the last holdout-many of the first (run + 1) * holdout-many)
// followed by every holdout row, shuffled with pandas' sample(frac=1,
// random_state=run); their nearest-synthetic distances and labels.
void run_attack_rows(int run, const std::vector<double>& training_nearest,
                     const std::vector<double>& holdout_nearest, std::vector<double>& distances,
                     std::vector<int>& labels) {
  const std::size_t holdout = holdout_nearest.size();
  const std::size_t end =
      std::min(holdout * static_cast<std::size_t>(run + 1), training_nearest.size());
  const std::size_t start = end >= holdout ? end - holdout : 0;
  const std::size_t count = end - start + holdout;
  const std::vector<std::size_t> order =
      LegacyRandom(static_cast<std::uint32_t>(run)).permutation(count);
  distances.resize(count);
  labels.resize(count);
  for (std::size_t i = 0; i < count; ++i) {
    const std::size_t a = order[i];
    const bool member = a < end - start;
    distances[i] = member ? training_nearest[start + a] : holdout_nearest[a - (end - start)];
    labels[i] = member ? 1 : 0;
  }
}

}  // namespace

double exact_mean(const std::vector<double>& values) {
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  // Each value is a 53-bit integer mantissa times 2^(exponent - 53): sum
  // them exactly at the smallest exponent.
  int low = std::numeric_limits<int>::max(), high = std::numeric_limits<int>::min();
  for (const double v : values) {
    if (v == 0) continue;
    int e = 0;
    std::frexp(v, &e);
    low = std::min(low, e - 53);
    high = std::max(high, e - 53);
  }
  if (high < low) return 0.0;                   // all zero
  if (high - low > 50 || values.size() > 1024)  // beyond the exact sum's range: plain mean
    return std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
  __int128 sum = 0;
  for (const double v : values) {
    if (v == 0) continue;
    int e = 0;
    const auto mantissa = static_cast<__int128>(std::ldexp(std::frexp(v, &e), 53));
    sum += mantissa * (static_cast<__int128>(1) << (e - 53 - low));
  }
  if (sum == 0) return 0.0;
  const double magnitude =
      rounded_quotient(static_cast<unsigned __int128>(sum < 0 ? -sum : sum), values.size(), low);
  return sum < 0 ? -magnitude : magnitude;
}

double membership_attack_run(std::vector<double> distances, const std::vector<int>& labels,
                             MembershipResult& result) {
  const double largest =
      distances.empty() ? 0.0 : *std::max_element(distances.begin(), distances.end());
  if (largest > 0)
    for (double& d : distances) d /= largest;
  double points = 0;
  for (const double threshold : kThresholds) {
    auto& counts = *std::find_if(result.thresholds.begin(), result.thresholds.end(),
                                 [&](const auto& t) { return t.threshold == threshold; });
    for (const double proportion : kProportions) {
      const auto used =
          static_cast<std::size_t>(static_cast<double>(distances.size()) * proportion);
      long true_positives = 0, false_positives = 0, correct = 0;
      for (std::size_t i = 0; i < used; ++i) {
        const bool predicted = distances[i] < threshold;
        if (predicted) (labels[i] == 1 ? true_positives : false_positives) += 1;
        correct += predicted == (labels[i] == 1) ? 1 : 0;
      }
      const long predicted = true_positives + false_positives;
      const double precision =
          predicted ? python_round(static_cast<double>(true_positives) / predicted, 1) : 0.0;
      const double accuracy = python_round(static_cast<double>(correct) / used, 1);
      const auto [grade, grade_points] = attack_grade(precision, accuracy);
      count_grade(result, grade);
      points += grade_points;
      counts.true_positives += true_positives;
      counts.false_positives += false_positives;
    }
  }
  return python_round(points / 36, 2);
}

MembershipResult measure_membership_inference(const EvaluationTables& tables,
                                              LegacyRandom& global_rng, unsigned threads) {
  MembershipResult result = empty_result();
  if (!tables.holdout) {
    result.score = unavailable();
    return result;
  }
  const Table& training = tables.training;
  const Table& holdout = *tables.holdout;
  const std::vector<std::size_t> candidates = candidate_training_rows(training.rows, holdout.rows);
  if (const auto texts = text_columns(tables, candidates); !texts.empty()) {
    result.score = unavailable(
        "Membership Inference Protection needs a sentence-embedding model for the text "
        "column(s) " +
        joined(texts) + "; nss_evaluate does not load one");
    return result;
  }
  std::vector<std::size_t> synthetic_rows(tables.synthetic.rows), holdout_rows(holdout.rows);
  std::iota(synthetic_rows.begin(), synthetic_rows.end(), std::size_t{0});
  std::iota(holdout_rows.begin(), holdout_rows.end(), std::size_t{0});
  std::vector<std::size_t> columns(training.columns.size());
  std::iota(columns.begin(), columns.end(), std::size_t{0});
  FeatureColumns features = encode_stacked_rows(
      {{&training, candidates}, {&tables.synthetic, synthetic_rows}, {&holdout, holdout_rows}},
      columns, 0.0);
  quantile_transform(features, kQuantiles, quantile_fit_rows(features.rows, global_rng));
  const FeatureRows synthetic = to_float_rows(features, candidates.size(), synthetic_rows.size());
  // Every run's attack rows come from these, so each row's nearest
  // synthetic distance is computed once.
  const std::vector<double> training_nearest =
      nearest_distances(to_float_rows(features, 0, candidates.size()), synthetic, threads);
  const std::vector<double> holdout_nearest = nearest_distances(
      to_float_rows(features, candidates.size() + synthetic_rows.size(), holdout.rows), synthetic,
      threads);
  std::vector<double> run_scores, distances;
  std::vector<int> labels;
  for (int run = 0; run < kRuns; ++run) {
    run_attack_rows(run, training_nearest, holdout_nearest, distances, labels);
    run_scores.push_back(membership_attack_run(distances, labels, result));
  }
  const double average = exact_mean(run_scores);
  result.score.raw = average;
  result.score.score = python_round((average - 1) / 2 * 10, 1);
  result.score.grade = score_to_grade(result.score.score);
  return result;
}

}  // namespace nss::evaluate
