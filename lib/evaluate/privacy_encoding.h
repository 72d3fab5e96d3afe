// How NeMo Safe Synthesizer's privacy attacks turn table rows into points:
// cells compared as Python values, nominal columns binary-encoded
// (category_encoders' BinaryEncoder), every column quantile-transformed to
// [0, 1] (sklearn's QuantileTransformer), the result cast to float32 for the
// nearest-neighbour search.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "evaluate/reference_random.h"
#include "evaluate/table.h"

namespace nss::evaluate {

/// True for an object column whose present cells are all True/False: pandas
/// holds such a column (a bool column with missing cells) as Python bools.
bool holds_python_bools(const Column& column);

/// A key per cell such that two keys are equal exactly when the two Python
/// values are (1 == 1.0 == True; "1" is a different text; every missing
/// cell is one key). `python_bools`: holds_python_bools(column).
std::string python_value_key(const Column& column, std::size_t row, bool python_bools);

/// The key of the Python float `value` (NaN: the missing key).
std::string number_value_key(double value);

/// True when `key` is the key of a missing cell.
bool is_missing_key(const std::string& key);

/// The number a key holds, or NaN for a text or a missing cell.
double key_number(const std::string& key);

/// Features column by column (column-major): values[c * rows + r].
struct FeatureColumns {
  std::size_t rows = 0, cols = 0;
  std::vector<double> values;
  double* column(std::size_t c) { return values.data() + c * rows; }
  const double* column(std::size_t c) const { return values.data() + c * rows; }
};

/// Row-major float32 features: what the nearest-neighbour search reads.
struct FeatureRows {
  std::size_t rows = 0, cols = 0;
  std::vector<float> values;
  const float* row(std::size_t r) const { return values.data() + r * cols; }
};

/// BinaryEncoder(handle_missing='value') fitted and applied on one column's
/// cells (`keys`, one per row): categories numbered 1.. in order of first
/// appearance, a missing cell last; each code written as binary digits,
/// most significant first, in as many columns as the largest code needs.
/// Appends those columns to `out` (whose rows must equal keys.size()).
void append_binary_encoded(const std::vector<std::string>& keys, FeatureColumns& out);

/// Some rows of a table, in order: one part of the concatenation a privacy
/// attack encodes.
struct RowBlock {
  const Table* table = nullptr;
  std::vector<std::size_t> rows;
};

/// The blocks' rows stacked (pandas concat) and encoded on `columns`: a
/// column stays numeric when it is int64 or float64 in every block (its
/// missing cells become `missing_number`), else it is binary-encoded over
/// all stacked rows.
FeatureColumns encode_stacked_rows(const std::vector<RowBlock>& blocks,
                                   const std::vector<std::size_t>& columns, double missing_number);

/// QuantileTransformer(n_quantiles, output_distribution='uniform') fitted on
/// the rows `fit_rows` of each column (every row when empty) and applied to
/// every row in place; NaN stays NaN, then becomes 0 (as the attacks'
/// fillna(0) does).
void quantile_transform(FeatureColumns& features, std::size_t n_quantiles,
                        const std::vector<std::size_t>& fit_rows = {});

/// The rows QuantileTransformer's default subsample (10000) fits on when a
/// matrix has more rows: the first 10000 of a shuffle of 0..rows-1 drawn from
/// `rng` (sklearn's resample); empty (all rows) otherwise.
std::vector<std::size_t> quantile_fit_rows(std::size_t rows, LegacyRandom& rng);

/// The rows [first, first + count) of `features` as float32 rows.
FeatureRows to_float_rows(const FeatureColumns& features, std::size_t first, std::size_t count);

}  // namespace nss::evaluate
