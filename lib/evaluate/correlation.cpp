#include "evaluate/correlation.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

namespace nss::evaluate {
namespace {

constexpr double kSnap = 1e-13;
const char* const kMissingProxy = "\x01missing";  // a category of its own

// One column as the matrix sees it: category keys (a missing cell its own
// category once the column is nominal) and numbers (NaN when missing).
struct Series {
  std::vector<std::string> keys;
  std::vector<double> numbers;
  std::vector<char> missing;
  bool object = false;
  bool nominal = false;

  std::size_t distinct() const {  // missing cells count once a nominal column fills them
    std::set<std::string> values;
    for (std::size_t r = 0; r < keys.size(); ++r)
      if (!missing[r] || nominal) values.insert(missing[r] ? kMissingProxy : keys[r]);
    return values.size();
  }
  bool usable(std::size_t r) const {
    return nominal ? true : !missing[r] && std::isfinite(numbers[r]);
  }
  std::string key(std::size_t r) const { return missing[r] ? kMissingProxy : keys[r]; }
};

Series series_of(const Column& column, bool nominal) {
  Series s;
  s.object = !column.numeric();
  s.nominal = nominal;
  s.missing = column.missing;
  for (std::size_t r = 0; r < column.rows(); ++r) {
    s.keys.push_back(column.key(r));
    s.numbers.push_back(column.numeric() ? column.numbers[r] : std::nan(""));
  }
  return s;
}

double entropy(const std::map<std::string, double>& counts, double total) {
  double h = 0;
  for (const auto& [key, count] : counts) {
    const double p = count / total;
    if (p > 0) h -= p * std::log(p);
  }
  return h;
}

// Theil's U of x given y on the rows where both are usable.
double conditional_u(const Series& x, const Series& y) {
  std::vector<std::string> xs, ys;
  for (std::size_t r = 0; r < x.keys.size(); ++r)
    if (x.usable(r) && y.usable(r)) {
      xs.push_back(x.key(r));
      ys.push_back(y.key(r));
    }
  return theils_u(xs, ys);
}

double ratio_of(const Series& category, const Series& number) {
  std::vector<std::string> keys;
  std::vector<double> values;
  for (std::size_t r = 0; r < category.keys.size(); ++r)
    if (category.usable(r) && number.usable(r)) {
      keys.push_back(category.key(r));
      values.push_back(number.numbers[r]);
    }
  return values.size() < 2 ? 0 : correlation_ratio(keys, values);
}

struct Roles {
  std::vector<std::size_t> single, numeric, completely_unique, high_unique, low_unique, not_cu;
};

// Which role each column plays, in the reference's order of decisions: a
// text column that is not yet nominal is judged without its missing cells,
// and becomes nominal (missing a category) only after every column is
// judged.
Roles assign_roles(std::vector<Series>& s, std::size_t rows) {
  Roles roles;
  std::vector<char> single(s.size(), 0), appended(s.size(), 0);
  for (std::size_t c = 0; c < s.size(); ++c) {
    if (s[c].distinct() == 1) {
      single[c] = 1;
      roles.single.push_back(c);
    } else if (!s[c].nominal) {
      if (s[c].object)
        appended[c] = 1;
      else
        roles.numeric.push_back(c);
    }
  }
  // The nominal list: the initially nominal columns, then the appended ones.
  std::vector<std::size_t> nominal;
  for (std::size_t c = 0; c < s.size(); ++c)
    if (s[c].nominal) nominal.push_back(c);
  for (std::size_t c = 0; c < s.size(); ++c)
    if (appended[c]) {
      s[c].nominal = true;
      nominal.push_back(c);
    }
  for (const std::size_t c : nominal) {
    if (single[c]) continue;
    const double ratio = static_cast<double>(s[c].distinct()) / static_cast<double>(rows);
    if (ratio == 1) {
      roles.completely_unique.push_back(c);
      continue;
    }
    (ratio > 0.1 ? roles.high_unique : roles.low_unique).push_back(c);
    roles.not_cu.push_back(c);
  }
  return roles;
}

}  // namespace

double theils_u(const std::vector<std::string>& x, const std::vector<std::string>& y) {
  if (x.empty()) return 0;
  const double total = static_cast<double>(x.size());
  std::map<std::string, double> px, py;
  std::map<std::pair<std::string, std::string>, double> pxy;
  for (std::size_t r = 0; r < x.size(); ++r) {
    px[x[r]] += 1;
    py[y[r]] += 1;
    pxy[{x[r], y[r]}] += 1;
  }
  const double hx = entropy(px, total);
  if (hx == 0) return 1.0;
  double h_given = 0;
  for (const auto& [pair, count] : pxy) {
    const double joint = count / total;
    h_given += joint * std::log((py[pair.second] / total) / joint);
  }
  double u = (hx - h_given) / hx;
  if (u >= -kSnap && u < 0) u = 0;
  if (u > 1 && u <= 1 + kSnap) u = 1;
  return u;
}

double correlation_ratio(const std::vector<std::string>& categories,
                         const std::vector<double>& values) {
  std::map<std::string, std::pair<double, double>> groups;  // sum, count
  double mean = 0;
  for (std::size_t r = 0; r < values.size(); ++r) {
    groups[categories[r]].first += values[r];
    groups[categories[r]].second += 1;
    mean += values[r];
  }
  mean /= static_cast<double>(values.size());
  double between = 0, total = 0;
  for (const auto& [key, group] : groups) {
    const double group_mean = group.first / group.second;
    between += group.second * (group_mean - mean) * (group_mean - mean);
  }
  if (between == 0) return 0;
  for (const double v : values) total += (v - mean) * (v - mean);
  double eta = std::sqrt(between / total);
  if (eta > 1 && eta <= 1 + kSnap) eta = 1;
  return eta;
}

double pearson(const std::vector<double>& x, const std::vector<double>& y) {
  std::vector<double> a, b;
  for (std::size_t r = 0; r < x.size(); ++r)
    if (std::isfinite(x[r]) && std::isfinite(y[r])) {
      a.push_back(x[r]);
      b.push_back(y[r]);
    }
  const auto constant = [](const std::vector<double>& v) {
    return std::all_of(v.begin(), v.end(), [&](double x) { return x == v.front(); });
  };
  if (a.size() <= 1 || constant(a) || constant(b)) return 0;
  const double n = static_cast<double>(a.size());
  double ma = 0, mb = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    ma += a[i];
    mb += b[i];
  }
  ma /= n;
  mb /= n;
  double sab = 0, saa = 0, sbb = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    sab += (a[i] - ma) * (b[i] - mb);
    saa += (a[i] - ma) * (a[i] - ma);
    sbb += (b[i] - mb) * (b[i] - mb);
  }
  return std::clamp(sab / std::sqrt(saa * sbb), -1.0, 1.0);
}

std::vector<double> association_matrix(const Table& table, const std::vector<std::size_t>& columns,
                                       const std::vector<bool>& nominal) {
  const std::size_t n = columns.size();
  std::vector<Series> s;
  for (std::size_t i = 0; i < n; ++i) s.push_back(series_of(table.columns[columns[i]], nominal[i]));
  const Roles roles = assign_roles(s, table.rows);
  std::vector<double> m(n * n, 0.0);
  const auto at = [&](std::size_t row, std::size_t col) -> double& { return m[row * n + col]; };
  for (const std::size_t x : roles.completely_unique) {
    for (std::size_t y = 0; y < n; ++y) at(x, y) = 1;
    const double own = std::log(static_cast<double>(s[x].distinct()));
    for (std::size_t y = 0; y < n; ++y) {
      const std::size_t distinct = s[y].distinct();
      at(y, x) = y == x ? 1 : distinct == 0 ? 0 : std::log(static_cast<double>(distinct)) / own;
    }
  }
  for (const std::size_t x : roles.single) {
    for (std::size_t y = 0; y < n; ++y) at(x, y) = at(y, x) = 0;
    at(x, x) = 1;
  }
  for (const std::size_t f1 : roles.not_cu)
    for (const std::size_t f2 : roles.not_cu) {
      at(f1, f1) = 1;
      if (f1 != f2) at(f2, f1) = conditional_u(s[f1], s[f2]);
    }
  for (const std::size_t f1 : roles.low_unique)
    for (const std::size_t f2 : roles.numeric) at(f1, f2) = at(f2, f1) = ratio_of(s[f1], s[f2]);
  for (const std::size_t f1 : roles.high_unique)
    for (const std::size_t f2 : roles.numeric) {
      at(f2, f1) = conditional_u(s[f1], s[f2]);
      at(f1, f2) = conditional_u(s[f2], s[f1]);
    }
  for (std::size_t i = 0; i < roles.numeric.size(); ++i) {
    const std::size_t a = roles.numeric[i];
    at(a, a) = 1;
    for (std::size_t j = i + 1; j < roles.numeric.size(); ++j) {
      const std::size_t b = roles.numeric[j];
      at(a, b) = at(b, a) = pearson(s[a].numbers, s[b].numbers);
    }
  }
  for (double& v : m)
    if (v == std::numeric_limits<double>::infinity()) v = 0;
  return m;
}

double correlation_curve(double m) {
  if (m > 0.46) return 0;
  if (m < 0.01) return 10;
  return 37.562 * m * m - 35.643 * m + 10.056;
}

CorrelationResult measure_correlation(const EvaluationTables& tables) {
  CorrelationResult out;
  std::vector<std::size_t> columns;
  std::vector<bool> nominal;
  for (std::size_t c = 0; c < tables.training_types.size(); ++c)
    if (is_tabular(tables.training_types[c])) {
      columns.push_back(c);
      nominal.push_back(is_nominal(tables.training_types[c]));
      out.columns.push_back(tables.training.columns[c].name);
    }
  if (columns.size() < 2) {
    out.score = unavailable("fewer than two tabular columns");
    return out;
  }
  out.training = association_matrix(tables.training, columns, nominal);
  out.synthetic = association_matrix(tables.synthetic, columns, nominal);
  const std::size_t n = columns.size();
  out.difference.resize(n * n);
  double sum_of_means = 0;
  std::size_t counted = 0;
  for (std::size_t col = 0; col < n; ++col) {
    double sum = 0;
    std::size_t present = 0;
    for (std::size_t row = 0; row < n; ++row) {
      const double d = std::fabs(out.training[row * n + col] - out.synthetic[row * n + col]);
      out.difference[row * n + col] = d;
      if (std::isnan(d)) continue;
      sum += d;
      ++present;
    }
    if (present == 0) continue;
    sum_of_means += sum / static_cast<double>(present);
    ++counted;
  }
  const double mae = counted == 0 ? std::nan("") : sum_of_means / static_cast<double>(counted);
  out.score = finalize(mae, correlation_curve(mae), Rounding::kNumpy, Rounding::kNumpy);
  return out;
}

}  // namespace nss::evaluate
