#include "evaluate/privacy_encoding.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <unordered_map>

namespace nss::evaluate {
namespace {

constexpr char kMissingTag = 0, kNumberTag = 1, kTextTag = 2;
constexpr std::size_t kQuantileSubsample = 10000;  // sklearn's default `subsample`

std::string number_key(double value) {
  if (value == 0) value = 0;  // -0.0 == 0.0 in Python
  std::string key(1 + sizeof value, kNumberTag);
  std::memcpy(&key[1], &value, sizeof value);
  return key;
}

// numpy.linspace(0, 1, n): i * (1 / (n - 1)), the last exactly 1.
std::vector<double> unit_linspace(std::size_t n) {
  std::vector<double> out(n, 0.0);
  if (n < 2) return out;
  const double step = 1.0 / static_cast<double>(n - 1);
  for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<double>(i) * step;
  out[n - 1] = 1.0;
  return out;
}

// numpy's percentile, method 'linear', of sorted values at fraction q:
// virtual index (m - 1) q and numpy's two-sided lerp.
double sorted_percentile(const std::vector<double>& sorted, double q) {
  const std::size_t m = sorted.size();
  const double virtual_index = static_cast<double>(m - 1) * q;
  if (virtual_index >= static_cast<double>(m - 1)) return sorted[m - 1];
  const double below = std::floor(virtual_index);
  const std::size_t i = static_cast<std::size_t>(below);
  const double t = virtual_index - below;
  const double a = sorted[i], b = sorted[i + 1], diff = b - a;
  return t >= 0.5 ? b - diff * (1 - t) : a + diff * t;
}

// numpy.interp(x, xp, fp) for increasing xp (runs of equal xp allowed):
// below/above the ends the end values; at a run of equal xp the last one.
double numpy_interp(double x, const std::vector<double>& xp, const std::vector<double>& fp) {
  const std::size_t n = xp.size();
  if (x < xp[0]) return fp[0];
  if (x > xp[n - 1]) return fp[n - 1];
  const std::size_t j =
      static_cast<std::size_t>(std::upper_bound(xp.begin(), xp.end(), x) - xp.begin()) - 1;
  if (j == n - 1 || xp[j] == x) return fp[j];
  const double slope = (fp[j + 1] - fp[j]) / (xp[j + 1] - xp[j]);
  double y = slope * (x - xp[j]) + fp[j];
  if (std::isnan(y)) {
    y = slope * (x - xp[j + 1]) + fp[j + 1];
    if (std::isnan(y) && fp[j] == fp[j + 1]) y = fp[j];
  }
  return y;
}

// The fitted quantiles of one column: percentiles of its non-NaN fit values
// at the reference fractions (all NaN when it has none).
std::vector<double> column_quantiles(const double* column, std::size_t rows,
                                     const std::vector<std::size_t>& fit_rows,
                                     const std::vector<double>& references) {
  std::vector<double> values;
  const auto take = [&](std::size_t r) {
    if (!std::isnan(column[r])) values.push_back(column[r]);
  };
  if (fit_rows.empty()) {
    for (std::size_t r = 0; r < rows; ++r) take(r);
  } else {
    for (const std::size_t r : fit_rows) take(r);
  }
  std::vector<double> quantiles(references.size(), std::numeric_limits<double>::quiet_NaN());
  if (values.empty()) return quantiles;
  std::sort(values.begin(), values.end());
  // sklearn passes references * 100 to nanpercentile, which divides by 100.
  for (std::size_t k = 0; k < references.size(); ++k)
    quantiles[k] = sorted_percentile(values, references[k] * 100 / 100);
  return quantiles;
}

// QuantileTransformer._transform_col (uniform): the mean of interpolating
// from below and from above, then exact ends mapped to 0 and 1; NaN -> 0.
void transform_column(double* column, std::size_t rows, const std::vector<double>& quantiles,
                      const std::vector<double>& references) {
  if (std::isnan(quantiles.front())) {  // no value to fit on
    std::fill(column, column + rows, 0.0);
    return;
  }
  std::vector<double> negated_quantiles(quantiles.rbegin(), quantiles.rend());
  std::vector<double> negated_references(references.rbegin(), references.rend());
  for (double& v : negated_quantiles) v = -v;
  for (double& v : negated_references) v = -v;
  for (std::size_t r = 0; r < rows; ++r) {
    const double x = column[r];
    if (std::isnan(x)) {
      column[r] = 0.0;
      continue;
    }
    double y = 0.5 * (numpy_interp(x, quantiles, references) -
                      numpy_interp(-x, negated_quantiles, negated_references));
    if (x == quantiles.back()) y = 1;
    if (x == quantiles.front()) y = 0;
    column[r] = y;
  }
}

}  // namespace

bool holds_python_bools(const Column& column) {
  if (column.dtype != Dtype::kObject) return false;
  bool any = false;
  for (std::size_t r = 0; r < column.rows(); ++r) {
    if (column.is_missing(r)) continue;
    if (column.texts[r] != "True" && column.texts[r] != "False") return false;
    any = true;
  }
  return any;
}

std::string python_value_key(const Column& column, std::size_t row, bool python_bools) {
  if (column.is_missing(row)) return std::string(1, kMissingTag);
  if (column.numeric()) return number_key(column.numbers[row]);
  if (python_bools) return number_key(column.texts[row] == "True" ? 1.0 : 0.0);
  return kTextTag + column.texts[row];
}

std::string number_value_key(double value) {
  return std::isnan(value) ? std::string(1, kMissingTag) : number_key(value);
}

bool is_missing_key(const std::string& key) {
  return key.size() == 1 && key[0] == kMissingTag;
}

double key_number(const std::string& key) {
  if (key.empty() || key[0] != kNumberTag) return std::numeric_limits<double>::quiet_NaN();
  double value;
  std::memcpy(&value, &key[1], sizeof value);
  return value;
}

void append_binary_encoded(const std::vector<std::string>& keys, FeatureColumns& out) {
  std::unordered_map<std::string, std::size_t> codes;
  std::vector<std::size_t> row_codes(keys.size(), 0);  // 0: missing, coded last below
  bool any_missing = false;
  for (std::size_t r = 0; r < keys.size(); ++r) {
    if (is_missing_key(keys[r])) {
      any_missing = true;
      continue;
    }
    row_codes[r] = codes.emplace(keys[r], codes.size() + 1).first->second;
  }
  const std::size_t largest = codes.size() + (any_missing ? 1 : 0);
  std::size_t digits = 0;
  for (std::size_t k = largest; k > 0; k >>= 1) ++digits;
  out.values.resize((out.cols + digits) * out.rows, 0.0);
  for (std::size_t r = 0; r < keys.size(); ++r) {
    const std::size_t code = row_codes[r] != 0 ? row_codes[r] : largest;
    for (std::size_t d = 0; d < digits; ++d)
      out.column(out.cols + d)[r] = static_cast<double>((code >> (digits - 1 - d)) & 1);
  }
  out.cols += digits;
}

FeatureColumns encode_stacked_rows(const std::vector<RowBlock>& blocks,
                                   const std::vector<std::size_t>& columns, double missing_number) {
  FeatureColumns out;
  for (const RowBlock& block : blocks) out.rows += block.rows.size();
  for (const std::size_t c : columns) {
    const bool numeric = std::all_of(blocks.begin(), blocks.end(), [&](const RowBlock& block) {
      const Dtype dtype = block.table->columns[c].dtype;
      return dtype == Dtype::kInt64 || dtype == Dtype::kFloat64;
    });
    if (numeric) {
      out.values.resize((out.cols + 1) * out.rows);
      double* target = out.column(out.cols++);
      for (const RowBlock& block : blocks) {
        const Column& column = block.table->columns[c];
        for (const std::size_t r : block.rows)
          *target++ = column.is_missing(r) ? missing_number : column.numbers[r];
      }
      continue;
    }
    std::vector<std::string> keys;
    keys.reserve(out.rows);
    for (const RowBlock& block : blocks) {
      const Column& column = block.table->columns[c];
      const bool python_bools = holds_python_bools(column);
      for (const std::size_t r : block.rows)
        keys.push_back(python_value_key(column, r, python_bools));
    }
    append_binary_encoded(keys, out);
  }
  return out;
}

void quantile_transform(FeatureColumns& features, std::size_t n_quantiles,
                        const std::vector<std::size_t>& fit_rows) {
  if (features.rows == 0) return;
  const std::size_t count = std::max<std::size_t>(1, std::min(n_quantiles, features.rows));
  const std::vector<double> references = unit_linspace(count);
  for (std::size_t c = 0; c < features.cols; ++c) {
    double* column = features.column(c);
    const std::vector<double> quantiles =
        column_quantiles(column, features.rows, fit_rows, references);
    transform_column(column, features.rows, quantiles, references);
  }
}

std::vector<std::size_t> quantile_fit_rows(std::size_t rows, LegacyRandom& rng) {
  if (rows <= kQuantileSubsample) return {};
  std::vector<std::size_t> order(rows);
  std::iota(order.begin(), order.end(), std::size_t{0});
  rng.shuffle(order);
  order.resize(kQuantileSubsample);
  return order;
}

FeatureRows to_float_rows(const FeatureColumns& features, std::size_t first, std::size_t count) {
  FeatureRows out;
  out.rows = count;
  out.cols = features.cols;
  out.values.resize(count * features.cols);
  for (std::size_t c = 0; c < features.cols; ++c) {
    const double* column = features.column(c) + first;
    for (std::size_t r = 0; r < count; ++r)
      out.values[r * features.cols + c] = static_cast<float>(column[r]);
  }
  return out;
}

}  // namespace nss::evaluate
