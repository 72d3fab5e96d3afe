// The quality metrics against NeMo Safe Synthesizer 0.1.16's own scores
// (tests/fixtures/evaluation, scripts/make_evaluation_fixtures.sh): on four
// scikit-learn tables and the generated mixed and free-text ones, with an
// independent, a memorised and a column-shuffled synthetic table, every raw
// score equal to the reference's 4 digits, every score to its 0.1 (text
// structure similarity too, per text column and in all; text semantic
// similarity unavailable, as NSS has it without its embedding model), the
// per-column distances and correlation matrices to 1e-9. The columns are
// put in the reference's order first (a Python set's order there; ours is
// the training table's).
#include <cmath>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "evaluate/evaluation_tables.h"
#include "evaluate/field_type.h"
#include "evaluate/quality_metrics.h"
#include "reference_fixtures.h"

namespace nss::evaluate {
namespace {

using nlohmann::json;

void expect_score(const Score& ours, const json& theirs, const std::string& what) {
  if (theirs.is_null() || theirs["score"].is_null()) {
    EXPECT_FALSE(ours.available()) << what;
    return;
  }
  ASSERT_TRUE(ours.available()) << what << ": " << ours.notes;
  EXPECT_NEAR(*ours.score, theirs["score"].get<double>(), 1e-9) << what;
  EXPECT_NEAR(*ours.raw, theirs["raw_score"].get<double>(), 1e-9) << what;
  EXPECT_EQ(ours.grade, theirs["grade"].get<std::string>()) << what;
}

// Per text column (only fixtures with text columns list them), in NSS's order.
void expect_text_columns(const TextStructureResult& ours, const json& expected) {
  const json theirs = expected.value("text_structure_columns", json::array());
  ASSERT_EQ(ours.columns.size(), theirs.size());
  for (std::size_t c = 0; c < theirs.size(); ++c) {
    EXPECT_EQ(ours.columns[c].name, theirs[c]["name"].get<std::string>());
    expect_score(ours.columns[c].score, theirs[c]["score"],
                 "text structure of " + theirs[c]["name"].get<std::string>());
  }
}

TEST(QualityReference, EveryScoreEqualsNemoSafeSynthesizers) {
  for (const char* name : reference::kTables)
    for (const char* variant : reference::kVariants) {
      SCOPED_TRACE(std::string(name) + "/" + variant);
      const std::string dir = reference::fixture(name, variant);
      const json expected = reference::scores(dir);
      const EvaluationTables tables = reference::tables_of(dir, expected["evaluated_columns"]);
      EvaluationResult result;
      measure_quality(tables, result);
      expect_score(result.column_distribution, expected["column_distribution_stability"]["score"],
                   "distribution");
      expect_score(result.correlation.score, expected["column_correlation_stability"]["score"],
                   "correlation");
      expect_score(result.deep_structure.score, expected["deep_structure_stability"]["score"],
                   "deep structure");
      expect_score(result.text_structure.score, expected["text_structure_similarity"],
                   "text structure");
      expect_text_columns(result.text_structure, expected);
      expect_score(result.text_semantic, expected["text_semantic_similarity"], "text semantic");
      expect_score(result.quality, expected["synthetic_quality_score"], "SQS");
      const json& fields = expected["column_distribution_stability"]["fields"];
      ASSERT_EQ(fields.size(), result.columns.size());
      for (std::size_t c = 0; c < fields.size(); ++c) {
        EXPECT_EQ(result.columns[c].name, fields[c]["name"]);
        // NSS's types (text: more than two spaces per value) decide what each metric reads.
        EXPECT_EQ(field_type_name(result.columns[c].training_type),
                  fields[c]["training_field_features"]["type"].get<std::string>())
            << result.columns[c].name;
        EXPECT_EQ(field_type_name(result.columns[c].synthetic_type),
                  fields[c]["synthetic_field_features"]["type"].get<std::string>())
            << result.columns[c].name;
        const json& distance = fields[c]["distribution_distance"];
        if (distance.is_null())
          EXPECT_FALSE(result.columns[c].distance) << result.columns[c].name;
        else
          EXPECT_NEAR(result.columns[c].distance.value_or(-1), distance.get<double>(), 1e-9)
              << result.columns[c].name;
      }
      const json& matrix = expected["column_correlation_stability"]["training_correlation"];
      const std::size_t n = matrix["columns"].size();
      ASSERT_EQ(result.correlation.columns.size(), n);
      for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < n; ++j)
          EXPECT_NEAR(result.correlation.training[i * n + j], matrix["values"][i][j].get<double>(),
                      1e-9)
              << i << "," << j;
    }
}

}  // namespace
}  // namespace nss::evaluate
