// The privacy metrics piece by piece against numbers the reference stack
// computes (category_encoders, sklearn's QuantileTransformer and
// NearestNeighbors with OMP_NUM_THREADS=1, statistics.mean), then whole
// against NeMo Safe Synthesizer 0.1.16's own scores (tests/fixtures/
// evaluation): MIA, AIA, DPS and memorized rows on four scikit-learn tables
// and the generated ones (unavailable where NSS has none: a text column),
// columns put in the reference's (Python set) order first.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "evaluate/attribute_inference.h"
#include "evaluate/data_privacy.h"
#include "evaluate/membership_inference.h"
#include "evaluate/memorized_rows.h"
#include "evaluate/nearest_neighbors.h"
#include "evaluate/privacy_encoding.h"
#include "evaluate/privacy_metrics.h"
#include "reference_fixtures.h"
#include "support/test_paths.h"

namespace nss::evaluate {
namespace {

using nlohmann::json;

Table table_of(const std::vector<std::string>& header,
               const std::vector<std::vector<std::string>>& rows) {
  return make_table(header, rows, "test.csv");
}

TEST(PrivacyEncoding, BinaryEncoderCodesFirstAppearanceAndMissingLast) {
  // category_encoders 2.11.2 on ['b', NaN, 'a', 'c']: b=1, a=2, c=3, NaN=4.
  const Table t = table_of({"c"}, {{"b"}, {""}, {"a"}, {"c"}});
  FeatureColumns out;
  out.rows = 4;
  std::vector<std::string> keys;
  for (std::size_t r = 0; r < 4; ++r) keys.push_back(python_value_key(t.columns[0], r, false));
  append_binary_encoded(keys, out);
  ASSERT_EQ(out.cols, 3u);
  const double expected[4][3] = {{0, 0, 1}, {1, 0, 0}, {0, 1, 0}, {0, 1, 1}};
  for (std::size_t r = 0; r < 4; ++r)
    for (std::size_t d = 0; d < 3; ++d) EXPECT_EQ(out.column(d)[r], expected[r][d]) << r << d;
}

TEST(PrivacyEncoding, PythonEqualityAcrossDtypes) {
  const Table ints = table_of({"x"}, {{"1"}, {"2"}});
  const Table floats = table_of({"x"}, {{"1.0"}, {""}});
  const Table texts = table_of({"x"}, {{"1"}, {"a"}});
  const Table bools = table_of({"x"}, {{"True"}, {""}});  // object column of Python bools
  EXPECT_TRUE(holds_python_bools(bools.columns[0]));
  EXPECT_EQ(python_value_key(ints.columns[0], 0, false),
            python_value_key(floats.columns[0], 0, false));
  EXPECT_EQ(python_value_key(ints.columns[0], 0, false),
            python_value_key(bools.columns[0], 0, true));
  EXPECT_NE(python_value_key(ints.columns[0], 0, false),
            python_value_key(texts.columns[0], 0, false));
  EXPECT_TRUE(is_missing_key(python_value_key(floats.columns[0], 1, false)));
}

TEST(PrivacyEncoding, QuantileTransformMatchesSklearn) {
  // sklearn 1.8 QuantileTransformer(n_quantiles=5) on these two columns
  // (ties, a NaN); sklearn keeps NaN, the attacks then fill it with 0.
  const double a[] = {3, 1, 4, 1, 5, 9, 2, 6, 5, 3, NAN};
  const double b[] = {0.5, 0.25, 0.5, 7.0, 0.5, -2.0, 0.5, 1.5, 0.5, 0.5, 1.0};
  FeatureColumns f;
  f.rows = 11;
  f.cols = 2;
  f.values.assign(a, a + 11);
  f.values.insert(f.values.end(), b, b + 11);
  quantile_transform(f, 5);
  const double ya[] = {0.4, 0.0, 0.5833333333333334, 0.0, 0.75, 1.0, 0.2, 0.8125, 0.75, 0.4, 0.0};
  const double yb[] = {0.375, 0.225, 0.375, 1.0, 0.375, 0.0, 0.375, 0.78, 0.375, 0.375, 0.76};
  for (std::size_t r = 0; r < 11; ++r) {
    EXPECT_EQ(f.column(0)[r], ya[r]) << r;
    EXPECT_EQ(f.column(1)[r], yb[r]) << r;
  }
}

TEST(PrivacyEncoding, QuantileSubsampleOnlyAbove10000Rows) {
  LegacyRandom rng(5);
  EXPECT_TRUE(quantile_fit_rows(10000, rng).empty());
  const auto rows = quantile_fit_rows(10001, rng);
  EXPECT_EQ(rows.size(), 10000u);
}

TEST(NearestNeighbors, TieOrderMatchesSklearn191OneThread) {
  // sklearn NearestNeighbors(algorithm='brute') with OMP_NUM_THREADS=1.
  FeatureRows r;
  r.rows = 600;
  r.cols = 3;
  for (std::size_t j = 0; j < 600; ++j)
    for (const double v : {double(j % 3), double((j / 3) % 2), j % 5 == 0 ? 1.0 : 0.0})
      r.values.push_back(static_cast<float>(v * 0.5));
  const float query[] = {0.5f, 0.0f, 0.0f};
  EXPECT_EQ(k_nearest_rows(query, r, 5), (std::vector<std::size_t>{1, 19, 7, 31, 13}));
  FeatureRows s;
  s.rows = 40;
  s.cols = 2;
  for (std::size_t j = 0; j < 40; ++j) {
    s.values.push_back(static_cast<float>(j % 4));
    s.values.push_back(static_cast<float>(j % 7));
  }
  const float q2[] = {1.0f, 3.0f};
  EXPECT_EQ(k_nearest_rows(q2, s, 7), (std::vector<std::size_t>{17, 25, 37, 10, 38, 24, 9}));
  // More than 15 neighbours: sklearn's introsort partitions before its
  // insertion sort.
  EXPECT_EQ(k_nearest_rows(q2, s, 20),
            (std::vector<std::size_t>{17, 9, 37, 10, 24, 25, 38, 18, 2,  32,
                                      16, 4, 30, 1,  5,  33, 3,  29, 31, 12}));
}

TEST(NearestNeighbors, TooFewRowsGivesSklearnsMessage) {
  FeatureRows r;
  r.rows = 3;
  r.cols = 1;
  r.values = {0, 1, 2};
  const float q = 0;
  try {
    k_nearest_rows(&q, r, 5);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.message(),
              "Expected n_neighbors <= n_samples_fit, but n_neighbors = 5, n_samples_fit = 3, "
              "n_samples = 1");
  }
}

TEST(NearestNeighbors, BlockedDistancesEqualPairwiseAndIgnoreThreads) {
  FeatureRows q, r;
  q.rows = 37;
  r.rows = 530;
  q.cols = r.cols = 13;
  std::uint32_t state = 7;
  const auto next = [&] {
    return static_cast<float>((state = state * 1664525u + 1013904223u) >> 8) / 16777216.0f;
  };
  for (std::size_t i = 0; i < q.rows * q.cols; ++i) q.values.push_back(next());
  for (std::size_t i = 0; i < r.rows * r.cols; ++i) r.values.push_back(next());
  const auto one = nearest_distances(q, r, 1), many = nearest_distances(q, r, 3);
  for (std::size_t i = 0; i < q.rows; ++i) {
    double best = INFINITY;
    for (std::size_t j = 0; j < r.rows; ++j)
      best = std::min(best, squared_distance(q.row(i), r.row(j), q.cols));
    EXPECT_EQ(one[i], std::sqrt(best)) << i;
    EXPECT_EQ(one[i], many[i]) << i;
  }
}

TEST(MembershipInference, ExactMeanIsPythonsStatisticsMean) {
  // statistics.mean gives 2.135; sum()/10 gives 2.1350000000000002.
  EXPECT_EQ(exact_mean({2.13, 2.14, 2.15, 2.12, 2.17, 2.11, 2.13, 2.16, 2.14, 2.1}), 2.135);
  EXPECT_EQ(exact_mean({1.0, 2.0}), 1.5);
  EXPECT_EQ(exact_mean({0.1, 0.2, 0.3}), 0.2);
}

TEST(MembershipInference, AttackRunGradesPrecisionAndAccuracy) {
  // Members at distance 0, non-members far: every attack predicts exactly
  // the members -> precision 1, accuracy 1 -> Poor (1 point) everywhere.
  MembershipResult result;
  for (const char* g : {"Excellent", "Very Good", "Good", "Moderate", "Poor"})
    result.attack_grades.emplace_back(g, 0);
  for (const double t : {0.1, 0.2, 0.3, 0.4}) result.thresholds.push_back({t, 0, 0});
  EXPECT_EQ(
      membership_attack_run({0, 1, 0, 1, 0, 1, 0, 1, 0, 1}, {1, 0, 1, 0, 1, 0, 1, 0, 1, 0}, result),
      1.0);
  EXPECT_EQ(result.attack_grades[4].second, 36);
}

TEST(AttributeInference, NamesThatLookCategorical) {
  for (const char* yes :
       {"zip_code", "ZIPCode", "patientId", "Year", "startDate", "icd-10", "record.key"})
    EXPECT_TRUE(name_looks_categorical(yes)) << yes;
  for (const char* no : {"identity", "income", "petal length (cm)", "zipper", "ID2x"})
    EXPECT_FALSE(name_looks_categorical(no)) << no;
}

TEST(AttributeInference, ToleranceShrinksWithDecimalDigits) {
  EXPECT_EQ(numeric_tolerance(127.0, true), 0.01);
  EXPECT_EQ(numeric_tolerance(2.5, true), 0.01 / 10);
  EXPECT_EQ(numeric_tolerance(2.25, false), 0.01);
  double expected = 0.01;
  for (int i = 0; i < 55; ++i) expected /= 10;  // 0.1 = m / 2^55
  EXPECT_EQ(numeric_tolerance(0.1, true), expected);
}

TEST(MemorizedRows, ExactCopiesAcrossDtypesAndMissingCells) {
  const Table training = table_of({"a", "b"}, {{"1", "x"}, {"2", ""}, {"2", ""}, {"3", "z"}});
  const Table synthetic =
      table_of({"a", "b"}, {{"1.0", "x"}, {"2.0", ""}, {"3.5", "z"}, {"", "x"}});
  EXPECT_EQ(count_memorized_rows(training, synthetic), 2u);  // (1, x) and (2, NaN)
  const Table texts = table_of({"a", "b"}, {{"one", "x"}, {"2", ""}});
  EXPECT_EQ(count_memorized_rows(training, texts), 0u);  // the number 2 is not the text "2"
  EXPECT_EQ(missing_percent(training), 25);
}

TEST(DataPrivacy, MeanOfTruthyScores) {
  Score aia, mia;
  aia.score = 9.0;
  mia.score = 5.7;
  EXPECT_EQ(*data_privacy_score(aia, mia).score, 7.3);  // 7.35 is just below the half
  mia.score = 0.0;
  EXPECT_EQ(*data_privacy_score(aia, mia).score, 9.0);
  EXPECT_FALSE(data_privacy_score(unavailable(), unavailable()).available());
}

// ---------------------------------------------------------------------------
// Against NeMo Safe Synthesizer's own scores.

using reference::fixture;
using reference::kTables;
using reference::kVariants;
using reference::reordered;

double reference_score(const json& component) {
  return component["score"]["score"].is_null() ? NAN : component["score"]["score"].get<double>();
}

// Beyond the brief's +-0.5: the raw scores, each column's risk, each grade's
// attack count and the true/false positives come out as NSS's.
void expect_details(const EvaluationResult& result, const json& reference) {
  const json& mia = reference["membership_inference_protection"];
  EXPECT_NEAR(*result.membership.score.raw, mia["score"]["raw_score"].get<double>(), 1e-12);
  EXPECT_EQ(result.membership.score.grade, mia["score"]["grade"].get<std::string>());
  for (const json& row : mia["attack_summary"])
    for (const auto& [grade, count] : result.membership.attack_grades)
      if (grade == row["Protection"].get<std::string>()) {
        EXPECT_EQ(count, row["Attack Count"].get<int>()) << grade;
      }
  for (const auto& t : result.membership.thresholds) {
    char key[8];
    std::snprintf(key, sizeof key, "%.1f", t.threshold);
    EXPECT_EQ(t.true_positives, mia["tps_values"][key].get<long>()) << key;
    EXPECT_EQ(t.false_positives, mia["fps_values"][key].get<long>()) << key;
  }
  const json& aia = reference["attribute_inference_protection"];
  EXPECT_NEAR(*result.attribute.score.raw, aia["score"]["raw_score"].get<double>(), 1e-9);
  EXPECT_EQ(result.attribute.score.grade, aia["score"]["grade"].get<std::string>());
  ASSERT_EQ(result.attribute.columns.size(), aia["columns"].size());
  for (std::size_t c = 0; c < aia["columns"].size(); ++c) {
    EXPECT_EQ(result.attribute.columns[c].name, aia["columns"][c]["Column"].get<std::string>());
    EXPECT_NEAR(result.attribute.columns[c].risk, aia["columns"][c]["Risk"].get<double>(), 1e-9);
    EXPECT_EQ(result.attribute.columns[c].grade,
              aia["columns"][c]["Protection"].get<std::string>());
  }
  const json& dps = reference["data_privacy_score"];
  EXPECT_NEAR(*result.privacy.raw, dps["raw_score"].get<double>(), 1e-12);
  EXPECT_EQ(result.privacy.grade, dps["grade"].get<std::string>());
}

TEST(PrivacyReference, ScoresMatchNemoSafeSynthesizers) {
  std::printf("%-14s %-12s %14s %14s %14s %10s\n", "table", "variant", "MIA ours/NSS",
              "AIA ours/NSS", "DPS ours/NSS", "memorized");
  for (const char* name : kTables)
    for (const char* variant : kVariants) {
      SCOPED_TRACE(std::string(name) + "/" + variant);
      const std::string dir = fixture(name, variant);
      const json reference = json::parse(std::ifstream(dir + "/scores.json"));
      const json& order = reference["evaluated_columns"];
      const EvaluationTables tables = make_evaluation_tables(
          reordered(read_table(dir + "/train.csv", "--train"), order),
          reordered(read_table(dir + "/synthetic.csv", "--synthetic"), order),
          reordered(read_table(dir + "/holdout.csv", "--holdout"), order));
      EvaluationResult result;
      measure_privacy(tables, result);
      const std::size_t memorized = reference["dataset_statistics"]["memorized_lines"];
      EXPECT_EQ(result.statistics.memorized_rows, memorized);
      EXPECT_EQ(result.statistics.training_missing_percent,
                reference["dataset_statistics"]["training_missing"].get<int>());
      if (reference["data_privacy_score"]["score"].is_null()) {
        // A text column: NSS (without its embedding model) scores neither attack.
        EXPECT_TRUE(reference["membership_inference_protection"]["score"]["score"].is_null());
        EXPECT_TRUE(reference["attribute_inference_protection"]["score"]["score"].is_null());
        EXPECT_FALSE(result.membership.score.available());
        EXPECT_FALSE(result.attribute.score.available());
        EXPECT_FALSE(result.privacy.available());
        std::printf("%-14s %-12s %14s %14s %14s %4zu / %zu\n", name, variant, "unavailable",
                    "unavailable", "unavailable", result.statistics.memorized_rows, memorized);
        continue;
      }
      const double mia = reference_score(reference["membership_inference_protection"]);
      const double aia = reference_score(reference["attribute_inference_protection"]);
      const double dps = reference["data_privacy_score"]["score"].get<double>();
      ASSERT_TRUE(result.membership.score.available()) << result.membership.score.notes;
      ASSERT_TRUE(result.attribute.score.available()) << result.attribute.score.notes;
      ASSERT_TRUE(result.privacy.available());
      std::printf("%-14s %-12s %6.1f / %4.1f %6.1f / %4.1f %6.1f / %4.1f %4zu / %zu\n", name,
                  variant, *result.membership.score.score, mia, *result.attribute.score.score, aia,
                  *result.privacy.score, dps, result.statistics.memorized_rows, memorized);
      EXPECT_NEAR(*result.membership.score.score, mia, 0.5);
      EXPECT_NEAR(*result.attribute.score.score, aia, 0.5);
      EXPECT_NEAR(*result.privacy.score, dps, 0.5);
      expect_details(result, reference);
    }
}

// The membership attack at NSS's sampling cap, 5000 rows a table: a timing
// and a check that the distance search scales (seconds, not minutes).
TEST(PrivacyTiming, MembershipAt5000Rows) {
  const std::string dir = fixture("breast_cancer", "independent");
  const Table base = read_table(dir + "/train.csv", "--train");
  std::vector<std::size_t> rows(5000);
  for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = (i * 7919) % base.rows;
  const Table training = take_rows(base, rows);
  for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = (i * 104729 + 13) % base.rows;
  const Table synthetic = take_rows(base, rows);
  for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = (i * 15485863 + 5) % base.rows;
  const Table holdout = take_rows(base, rows);
  const EvaluationTables tables = make_evaluation_tables(training, synthetic, holdout);
  LegacyRandom rng(5);
  const auto start = std::chrono::steady_clock::now();
  const MembershipResult mia = measure_membership_inference(tables, rng);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("MIA on 5000 training + 5000 synthetic + 5000 holdout rows: %.2f s\n", seconds);
  EXPECT_TRUE(mia.score.available());
  EXPECT_LT(seconds, 60.0);
}

}  // namespace
}  // namespace nss::evaluate
