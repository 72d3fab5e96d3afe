// The evaluation's foundations against what the reference computes: numpy's
// legacy permutation and pandas' sample, Python's and numpy's rounding,
// Python's float repr, pandas' dtype inference and the field types.
#include "evaluate/table.h"

#include <cmath>
#include <fstream>

#include <gtest/gtest.h>

#include "core/error.h"
#include "evaluate/field_type.h"
#include "evaluate/reference_random.h"
#include "evaluate/score.h"
#include "support/test_paths.h"

namespace nss::evaluate {
namespace {

TEST(ReferenceRandom, NumpyPermutationAndRandint) {
  EXPECT_EQ(LegacyRandom(42).permutation(10),
            (std::vector<std::size_t>{8, 1, 5, 0, 7, 2, 9, 4, 3, 6}));
  LegacyRandom rng(1);
  std::vector<std::uint64_t> draws;
  for (int i = 0; i < 8; ++i) draws.push_back(rng.interval(99));
  EXPECT_EQ(draws, (std::vector<std::uint64_t>{37, 12, 72, 9, 75, 5, 79, 64}));
  EXPECT_EQ(sample_rows(10, 3, 42), (std::vector<std::size_t>{8, 1, 5}));
}

TEST(ReferenceRandom, PythonAndNumpyRoundDifferOnNearHalves) {
  EXPECT_EQ(python_round(9.35, 1), 9.3);
  EXPECT_EQ(python_round(9.55, 1), 9.6);
  EXPECT_EQ(python_round(4.35, 1), 4.3);
  EXPECT_EQ(numpy_round(4.35, 1), 4.4);
  EXPECT_EQ(python_round(9.65, 1), 9.7);
  EXPECT_EQ(numpy_round(0.125, 2), 0.12);
  EXPECT_EQ(python_round(2.5, 0), 2.0);
}

TEST(Score, GradesAndFinalize) {
  EXPECT_EQ(score_to_grade(std::nullopt), "Unavailable");
  EXPECT_EQ(score_to_grade(1.9), "Poor");
  EXPECT_EQ(score_to_grade(2.0), "Moderate");
  EXPECT_EQ(score_to_grade(7.99), "Very Good");
  EXPECT_EQ(score_to_grade(10.0), "Excellent");
  const Score s = finalize(0.123456, 10.7);
  EXPECT_EQ(*s.raw, 0.1235);
  EXPECT_EQ(*s.score, 10.0);
  EXPECT_EQ(s.grade, "Excellent");
  EXPECT_FALSE(finalize(std::nan(""), 1).available());
}

TEST(Table, PythonFloatRepr) {
  EXPECT_EQ(python_float_repr(1.5), "1.5");
  EXPECT_EQ(python_float_repr(3.0), "3.0");
  EXPECT_EQ(python_float_repr(0.1), "0.1");
  EXPECT_EQ(python_float_repr(1e20), "1e+20");
  EXPECT_EQ(python_float_repr(1e16), "1e+16");
  EXPECT_EQ(python_float_repr(1234567890123456.0), "1234567890123456.0");
  EXPECT_EQ(python_float_repr(0.0001), "0.0001");
  EXPECT_EQ(python_float_repr(0.00001), "1e-05");
  EXPECT_EQ(python_float_repr(-2.5e-7), "-2.5e-07");
  EXPECT_EQ(python_float_repr(123.456), "123.456");
  EXPECT_EQ(python_float_repr(std::nan("")), "nan");
}

TEST(Table, PandasDtypes) {
  const Table t = make_table({"i", "i_na", "f", "b", "b_na", "s", "empty", "spaced"},
                             {{"1", "3", "1.5", "True", "true", "a", "", " 5"},
                              {"-2", "", "2", "false", "", "1.50", "NA", "6 "},
                              {"3", "4", "inf", "TRUE", "False", "", "null", "7"}});
  const auto dtype = [&](const char* name) { return t.columns[t.index_of(name)].dtype; };
  EXPECT_EQ(dtype("i"), Dtype::kInt64);
  EXPECT_EQ(dtype("i_na"), Dtype::kFloat64);
  EXPECT_EQ(dtype("f"), Dtype::kFloat64);
  EXPECT_EQ(dtype("b"), Dtype::kBool);
  EXPECT_EQ(dtype("b_na"), Dtype::kObject);
  EXPECT_EQ(dtype("s"), Dtype::kObject);
  EXPECT_EQ(dtype("empty"), Dtype::kFloat64);
  EXPECT_EQ(dtype("spaced"), Dtype::kInt64);
  const Column& s = t.columns[t.index_of("s")];
  EXPECT_EQ(s.key(1), "1.50");
  EXPECT_EQ(s.key(2), "nan");
  EXPECT_EQ(t.columns[t.index_of("i_na")].key(0), "3.0");
  EXPECT_EQ(t.columns[t.index_of("b_na")].key(0), "True");
  EXPECT_EQ(t.columns[t.index_of("b")].key(1), "False");
  EXPECT_TRUE(std::isinf(t.columns[t.index_of("f")].numbers[2]));
  EXPECT_EQ(take_rows(t, {2, 0}).columns[0].numbers, (std::vector<double>{3, 1}));
}

TEST(FieldType, DescribeFieldRules) {
  std::vector<std::vector<std::string>> rows;
  for (int r = 0; r < 100; ++r)
    rows.push_back({std::to_string(r % 5), std::to_string(r), std::to_string(r % 2),
                    std::to_string(r * 0.5), "city" + std::to_string(r % 3),
                    "word one two three " + std::to_string(r), "id" + std::to_string(r), "",
                    std::to_string(-(r % 5))});
  const Table t = make_table(
      {"small_int", "int", "two", "float", "city", "prose", "ids", "none", "negative"}, rows);
  const auto type = [&](const char* name) { return describe_field(t.columns[t.index_of(name)]); };
  EXPECT_EQ(type("small_int"), FieldType::kCategorical);
  EXPECT_EQ(type("int"), FieldType::kNumeric);
  EXPECT_EQ(type("two"), FieldType::kBinary);
  EXPECT_EQ(type("float"), FieldType::kNumeric);
  EXPECT_EQ(type("city"), FieldType::kCategorical);
  EXPECT_EQ(type("prose"), FieldType::kText);
  EXPECT_EQ(type("ids"), FieldType::kOther);
  EXPECT_EQ(type("none"), FieldType::kEmpty);
  EXPECT_EQ(type("negative"), FieldType::kNumeric);
}

TEST(Table, ReadErrorsNameTheFileAndLine) {
  const std::string dir = nss::testing::scratch_dir("evaluate_table");
  std::ofstream(dir + "/ragged.csv") << "a,b\n1,2\n3\n";
  std::ofstream(dir + "/header_only.csv") << "a,b\n";
  std::ofstream(dir + "/long.csv") << "a\n" << std::string(100, 'x') << "\n";
  const auto message = [&](const std::string& name, std::size_t limit) {
    try {
      read_table(dir + "/" + name, "--synthetic", limit);
    } catch (const DataError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message("ragged.csv", 1000).find("ragged.csv:3"), std::string::npos);
  EXPECT_NE(message("header_only.csv", 1000).find("no rows"), std::string::npos);
  EXPECT_NE(message("long.csv", 50).find("long.csv:2: column a holds a cell of 100 bytes"),
            std::string::npos);
  EXPECT_NE(message("absent.csv", 1000).find("absent.csv"), std::string::npos);
}

}  // namespace
}  // namespace nss::evaluate
