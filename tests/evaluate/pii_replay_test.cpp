// PII replay as NeMo Safe Synthesizer computes it (evaluation/components/
// pii_replay.py): distinct training values of each assigned column found in
// the synthetic column, pandas' isin equality of typed values, NSS's
// percentage with its floating-point rounding.
#include "evaluate/pii_replay.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace nss::evaluate {
namespace {

TEST(PiiReplay, PercentageAsPythonRoundsIt) {
  // math.ceil(a / b * 100 * 10) / 10 in Python 3.11
  EXPECT_DOUBLE_EQ(replay_percentage(1, 3), 33.4);
  EXPECT_DOUBLE_EQ(replay_percentage(1, 16), 6.3);
  EXPECT_DOUBLE_EQ(replay_percentage(11, 20), 55.1);  // 55.00000000000001 before ceil
  EXPECT_DOUBLE_EQ(replay_percentage(7, 25), 28.1);
  EXPECT_DOUBLE_EQ(replay_percentage(29, 100), 29.0);
  EXPECT_DOUBLE_EQ(replay_percentage(7, 10), 70.0);
  EXPECT_DOUBLE_EQ(replay_percentage(5, 5), 100.0);
  EXPECT_DOUBLE_EQ(replay_percentage(0, 0), 0.0);
}

TEST(PiiReplay, CountsDistinctTrainingValuesFoundInTheSynthetic) {
  const Table training = make_table({"email", "zip", "age"},
                                    {{"a@x.org", "02134", "30"},
                                     {"b@x.org", "02134", "31"},
                                     {"a@x.org", "", "32"},
                                     {"", "94110", "33"}},
                                    "train.csv");
  const Table synthetic =
      make_table({"email", "zip", "age"},
                 {{"a@x.org", "2134", "30"}, {"a@x.org", "2134.0", "40"}, {"c@x.org", "", "41"}},
                 "synthetic.csv");
  const PiiReplayResult result =
      measure_pii_replay(training, synthetic, {{"email", "email", 3}, {"zip", "postcode", 3}});
  EXPECT_EQ(result.training_total_records, 4);
  EXPECT_EQ(result.synthetic_total_records, 3);
  ASSERT_EQ(result.pii_replay_data.size(), 2u);
  const PiiReplayDatum& email = result.pii_replay_data[0];
  EXPECT_EQ(email.column_name, "email");
  EXPECT_EQ(email.column_assigned_type, "email");
  EXPECT_EQ(email.pii_type, "email");
  EXPECT_EQ(email.total_training_data, 3);
  EXPECT_EQ(email.unique_training_data, 2);
  EXPECT_EQ(email.total_synthetic_data, 2);  // rows, a repeat counted
  EXPECT_EQ(email.unique_synthetic_data, 1);
  EXPECT_DOUBLE_EQ(email.unique_synthetic_data_percentage, 50.0);
  // pandas reads "02134" as the int 2134: "2134" and "2134.0" equal it.
  const PiiReplayDatum& zip = result.pii_replay_data[1];
  EXPECT_EQ(zip.unique_training_data, 2);
  EXPECT_EQ(zip.total_synthetic_data, 2);
  EXPECT_EQ(zip.unique_synthetic_data, 1);
}

TEST(PiiReplay, TextNeverEqualsANumber) {
  const Table training = make_table({"id"}, {{"5"}, {"6"}}, "train.csv");
  const Table synthetic = make_table({"id"}, {{"5"}, {"x"}}, "synthetic.csv");  // object column
  const PiiReplayResult result = measure_pii_replay(training, synthetic, {{"id", "ssn", -1}});
  EXPECT_EQ(result.pii_replay_data[0].unique_synthetic_data, 0);
  EXPECT_EQ(result.pii_replay_data[0].unique_training_data, 2);
}

TEST(PiiReplay, AReportOfAnotherTableIsADataError) {
  const Table training = make_table({"email"}, {{"a@x.org"}, {"b@x.org"}}, "train.csv");
  try {
    measure_pii_replay(training, training, {{"email", "email", 5}});
    FAIL() << "no error";
  } catch (const DataError& e) {
    EXPECT_NE(e.message().find("another training table (column email: 2 cells, the report says 5)"),
              std::string::npos);
  }
  EXPECT_THROW(measure_pii_replay(training, training, {{"phone", "phone_number", -1}}), DataError);
}

}  // namespace
}  // namespace nss::evaluate
