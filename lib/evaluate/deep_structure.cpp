#include "evaluate/deep_structure.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include "evaluate/distribution.h"

namespace nss::evaluate {
namespace {

constexpr const char* kMissingInput = "Missing input Dataframe.";

// A column with infinities read as missing.
Column finite_only(const Column& column) {
  Column out = column;
  if (!out.numeric()) return out;
  for (std::size_t r = 0; r < out.rows(); ++r)
    if (!out.is_missing(r) && !std::isfinite(out.numbers[r])) {
      out.numbers[r] = std::nan("");
      out.missing[r] = 1;
    }
  return out;
}

bool all_missing(const Column& column) {
  return std::all_of(column.missing.begin(), column.missing.end(), [](char m) { return m != 0; });
}

double median_of(const Column& column) {
  std::vector<double> values;
  for (std::size_t r = 0; r < column.rows(); ++r)
    if (!column.is_missing(r)) values.push_back(column.numbers[r]);
  if (values.empty()) return std::nan("");
  std::sort(values.begin(), values.end());
  const std::size_t mid = values.size() / 2;
  return values.size() % 2 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

// The feature matrices (rows x features, row-major): median-filled numbers,
// then count-encoded categories (counts of training rows with the value).
struct Features {
  std::vector<double> training, synthetic;
  std::size_t columns = 0;
};

Features build_features(const std::vector<Column>& train, const std::vector<Column>& synth) {
  std::vector<std::size_t> numbers, categories;
  for (std::size_t c = 0; c < train.size(); ++c) {
    const FieldType t = describe_field(train[c]), s = describe_field(synth[c]);
    if (is_nominal(t))
      categories.push_back(c);
    else if (t == FieldType::kNumeric && s == FieldType::kNumeric)
      numbers.push_back(c);
  }
  Features f;
  f.columns = numbers.size() + categories.size();
  const std::size_t rows_t = train.empty() ? 0 : train[0].rows();
  const std::size_t rows_s = synth.empty() ? 0 : synth[0].rows();
  f.training.assign(rows_t * f.columns, 0);
  f.synthetic.assign(rows_s * f.columns, 0);
  std::size_t k = 0;
  for (const std::size_t c : numbers) {
    for (const auto* side : {&train, &synth}) {
      const Column& column = (*side)[c];
      const double median = median_of(column);
      auto& matrix = side == &train ? f.training : f.synthetic;
      for (std::size_t r = 0; r < column.rows(); ++r)
        matrix[r * f.columns + k] = column.is_missing(r) ? median : column.numbers[r];
    }
    ++k;
  }
  for (const std::size_t c : categories) {
    std::map<std::string, double> counts;
    for (std::size_t r = 0; r < rows_t; ++r) counts[train[c].key(r)] += 1;
    for (std::size_t r = 0; r < rows_t; ++r)
      f.training[r * f.columns + k] = counts[train[c].key(r)];
    for (std::size_t r = 0; r < rows_s; ++r) {
      const auto found = counts.find(synth[c].key(r));
      f.synthetic[r * f.columns + k] = found == counts.end() ? 0 : found->second;
    }
    ++k;
  }
  return f;
}

// Standardises both matrices with the training columns' mean and
// population deviation (scikit-learn's StandardScaler, constant columns kept).
void standardise(Features& f, std::size_t rows_t) {
  const double n = static_cast<double>(rows_t), eps = std::ldexp(1.0, -52);
  for (std::size_t k = 0; k < f.columns; ++k) {
    double mean = 0, variance = 0;
    for (std::size_t r = 0; r < rows_t; ++r) mean += f.training[r * f.columns + k];
    mean /= n;
    for (std::size_t r = 0; r < rows_t; ++r)
      variance += std::pow(f.training[r * f.columns + k] - mean, 2);
    variance /= n;
    const bool constant = variance <= n * eps * variance + std::pow(n * mean * eps, 2);
    const double scale = constant ? 1 : std::sqrt(variance);
    for (auto* matrix : {&f.training, &f.synthetic})
      for (std::size_t r = 0; r * f.columns < matrix->size(); ++r)
        (*matrix)[r * f.columns + k] = ((*matrix)[r * f.columns + k] - mean) / scale;
  }
}

Column projection_column(const std::vector<double>& matrix, std::size_t columns,
                         const std::vector<double>& mean, const std::vector<double>& axis) {
  Column out;
  out.dtype = Dtype::kFloat64;
  for (std::size_t r = 0; r * columns < matrix.size(); ++r) {
    double v = 0;
    for (std::size_t k = 0; k < columns; ++k) v += (matrix[r * columns + k] - mean[k]) * axis[k];
    out.numbers.push_back(v);
    out.missing.push_back(0);
  }
  return out;
}

}  // namespace

void symmetric_eigen(std::vector<double> a, std::size_t n, std::vector<double>& values,
                     std::vector<std::vector<double>>& vectors) {
  std::vector<double> v(n * n, 0);
  for (std::size_t i = 0; i < n; ++i) v[i * n + i] = 1;
  for (int sweep = 0; sweep < 100; ++sweep) {
    double off = 0;
    for (std::size_t p = 0; p < n; ++p)
      for (std::size_t q = p + 1; q < n; ++q) off += a[p * n + q] * a[p * n + q];
    if (off < 1e-30) break;
    for (std::size_t p = 0; p < n; ++p)
      for (std::size_t q = p + 1; q < n; ++q) {
        const double apq = a[p * n + q];
        if (std::fabs(apq) < 1e-300) continue;
        const double theta = (a[q * n + q] - a[p * n + p]) / (2 * apq);
        const double t = (theta >= 0 ? 1 : -1) / (std::fabs(theta) + std::sqrt(theta * theta + 1));
        const double c = 1 / std::sqrt(t * t + 1), s = t * c;
        for (std::size_t k = 0; k < n; ++k) {  // columns p, q
          const double akp = a[k * n + p], akq = a[k * n + q];
          a[k * n + p] = c * akp - s * akq;
          a[k * n + q] = s * akp + c * akq;
        }
        for (std::size_t k = 0; k < n; ++k) {  // rows p, q
          const double apk = a[p * n + k], aqk = a[q * n + k];
          a[p * n + k] = c * apk - s * aqk;
          a[q * n + k] = s * apk + c * aqk;
        }
        for (std::size_t k = 0; k < n; ++k) {
          const double vkp = v[k * n + p], vkq = v[k * n + q];
          v[k * n + p] = c * vkp - s * vkq;
          v[k * n + q] = s * vkp + c * vkq;
        }
      }
  }
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(),
            [&](std::size_t x, std::size_t y) { return a[x * n + x] > a[y * n + y]; });
  values.clear();
  vectors.clear();
  for (const std::size_t i : order) {
    values.push_back(a[i * n + i]);
    std::vector<double> vec(n);
    for (std::size_t k = 0; k < n; ++k) vec[k] = v[k * n + i];
    vectors.push_back(std::move(vec));
  }
}

DeepStructureResult measure_deep_structure(const EvaluationTables& tables) {
  DeepStructureResult out;
  std::vector<Column> train, synth;
  for (std::size_t c = 0; c < tables.training_types.size(); ++c) {
    if (!is_tabular(tables.training_types[c]) || !is_tabular(tables.synthetic_types[c])) continue;
    Column t = finite_only(tables.training.columns[c]),
           s = finite_only(tables.synthetic.columns[c]);
    if (all_missing(t) || all_missing(s)) continue;
    train.push_back(std::move(t));
    synth.push_back(std::move(s));
  }
  if (train.empty()) {
    out.score = unavailable("No columns detected for PCA.");
    return out;
  }
  Features f = build_features(train, synth);
  const std::size_t rows_t = tables.training.rows, rows_s = tables.synthetic.rows;
  if (f.columns < 2 || rows_t < 2 || rows_s < 2) {
    // NSS's words first (its notes compare field by field), then what they mean here.
    out.score = unavailable(std::string(kMissingInput) + " Principal components need two columns " +
                            "that are numeric or categorical (here " + std::to_string(f.columns) +
                            ") and two rows in each table");
    return out;
  }
  standardise(f, rows_t);
  const std::size_t p = f.columns;
  std::vector<double> mean(p, 0), covariance(p * p, 0);
  for (std::size_t r = 0; r < rows_t; ++r)
    for (std::size_t k = 0; k < p; ++k)
      mean[k] += f.training[r * p + k] / static_cast<double>(rows_t);
  for (std::size_t r = 0; r < rows_t; ++r)
    for (std::size_t i = 0; i < p; ++i)
      for (std::size_t j = i; j < p; ++j)
        covariance[i * p + j] +=
            (f.training[r * p + i] - mean[i]) * (f.training[r * p + j] - mean[j]);
  for (std::size_t i = 0; i < p; ++i)
    for (std::size_t j = i; j < p; ++j)
      covariance[j * p + i] = covariance[i * p + j] /= static_cast<double>(rows_t - 1);
  std::vector<double> values;
  std::vector<std::vector<double>> vectors;
  symmetric_eigen(covariance, p, values, vectors);
  double raw = 0;
  std::array<Column, 2> pt, ps;
  for (std::size_t k = 0; k < 2; ++k) {
    std::vector<double>& axis = vectors[k];
    // scikit-learn's sign: the entry of largest magnitude positive.
    const auto largest = std::max_element(
        axis.begin(), axis.end(), [](double x, double y) { return std::fabs(x) < std::fabs(y); });
    if (*largest < 0)
      for (double& x : axis) x = -x;
    pt[k] = projection_column(f.training, p, mean, axis);
    ps[k] = projection_column(f.synthetic, p, mean, axis);
    const ColumnDistribution compared = compare_column("pc" + std::to_string(k + 1), pt[k], ps[k]);
    out.component_distances[k] = compared.distance;
    if (compared.distance && *compared.distance != 0) raw += *compared.distance;
  }
  raw /= 2;
  for (std::size_t r = 0; r < rows_t; ++r)
    out.training_points.push_back({pt[0].numbers[r], pt[1].numbers[r]});
  for (std::size_t r = 0; r < rows_s; ++r)
    out.synthetic_points.push_back({ps[0].numbers[r], ps[1].numbers[r]});
  out.score = finalize(raw, 10 * std::exp(-1.6 * raw), Rounding::kPython, Rounding::kNumpy);
  return out;
}

}  // namespace nss::evaluate
