#include "evaluate/distribution.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "evaluate/reference_random.h"

namespace nss::evaluate {
namespace {

constexpr std::size_t kMaxBins = 500;

std::vector<double> finite_values(const Column& column) {
  std::vector<double> values;
  if (!column.numeric()) return values;
  for (std::size_t r = 0; r < column.rows(); ++r)
    if (!column.is_missing(r) && std::isfinite(column.numbers[r]))
      values.push_back(column.numbers[r]);
  return values;
}

// numpy's linspace(lo, hi, bins + 1), the last edge exactly hi.
std::vector<double> linspace_edges(double lo, double hi, std::size_t bins) {
  std::vector<double> edges(bins + 1);
  const double step = (hi - lo) / static_cast<double>(bins);
  for (std::size_t i = 0; i <= bins; ++i) edges[i] = lo + static_cast<double>(i) * step;
  edges[bins] = hi;
  return edges;
}

// Doane's bin width of `a` (0 when it cannot tell).
double doane_width(const std::vector<double>& a) {
  const double n = static_cast<double>(a.size());
  if (a.size() <= 2) return 0;
  double mean = 0;
  for (const double v : a) mean += v;
  mean /= n;
  double variance = 0;
  for (const double v : a) variance += (v - mean) * (v - mean);
  const double sigma = std::sqrt(variance / n);
  if (!(sigma > 0)) return 0;
  double skew = 0;
  for (const double v : a) skew += std::pow((v - mean) / sigma, 3);
  skew /= n;
  const double sg1 = std::sqrt(6.0 * (n - 2) / ((n + 1.0) * (n + 3)));
  const auto [low, high] = std::minmax_element(a.begin(), a.end());
  return (*high - *low) / (1 + std::log2(n) + std::log2(1 + std::fabs(skew) / sg1));
}

// Integer dtypes make the category comparison read both sides as rounded
// integers when they convert (the training side first; a side that does
// not convert keeps its keys).
std::vector<std::string> integer_keys(const Column& column, bool& converted) {
  std::vector<std::string> keys(column.rows());
  converted = false;
  std::vector<double> values(column.rows(), std::nan(""));
  for (std::size_t r = 0; r < column.rows(); ++r) {
    if (column.is_missing(r)) continue;
    if (column.numeric()) {
      values[r] = column.numbers[r];
    } else {
      char* end = nullptr;
      values[r] = std::strtod(column.texts[r].c_str(), &end);
      if (end == column.texts[r].c_str() || *end != '\0') return keys;
    }
    if (!std::isfinite(values[r])) return keys;
  }
  for (std::size_t r = 0; r < column.rows(); ++r) {
    if (std::isnan(values[r])) {
      keys[r] = "<NA>";
      continue;
    }
    char text[32];
    std::snprintf(text, sizeof text, "%.0f", std::nearbyint(values[r]));
    keys[r] = std::string(text) == "-0" ? "0" : text;
  }
  converted = true;
  return keys;
}

Distribution counted(const std::vector<std::string>& keys) {
  Distribution out;
  for (const auto& key : keys) out[key] += 1;
  return out;
}

std::vector<std::string> plain_keys(const Column& column) {
  std::vector<std::string> keys(column.rows());
  for (std::size_t r = 0; r < column.rows(); ++r) keys[r] = column.key(r);
  return keys;
}

bool has_value(const Column& column) {
  for (std::size_t r = 0; r < column.rows(); ++r)
    if (!column.is_missing(r)) return true;
  return false;
}

std::string bin_label(const std::vector<double>& edges, std::size_t bin) {
  char text[96];
  std::snprintf(text, sizeof text, "%.4g to %.4g", edges[bin - 1], edges[bin]);
  return text;
}

// The report's shares: every label of either side, each side summing to 1.
void fill_shares(ColumnDistribution& out, const Distribution& training,
                 const Distribution& synthetic, const std::vector<std::string>& order) {
  double t_total = 0, s_total = 0;
  for (const auto& [key, weight] : training) t_total += weight;
  for (const auto& [key, weight] : synthetic) s_total += weight;
  for (const auto& key : order) {
    const auto t = training.find(key), s = synthetic.find(key);
    out.labels.push_back(key);
    out.training_share.push_back(t == training.end() || t_total == 0 ? 0 : t->second / t_total);
    out.synthetic_share.push_back(s == synthetic.end() || s_total == 0 ? 0 : s->second / s_total);
  }
}

// Categories drawn by training frequency, then synthetic-only ones.
std::vector<std::string> category_order(const Distribution& training,
                                        const Distribution& synthetic) {
  std::vector<std::pair<double, std::string>> ranked;
  for (const auto& [key, weight] : training) ranked.push_back({-weight, key});
  std::sort(ranked.begin(), ranked.end());
  std::vector<std::string> order;
  for (const auto& [weight, key] : ranked) order.push_back(key);
  for (const auto& [key, weight] : synthetic)
    if (!training.count(key)) order.push_back(key);
  return order;
}

}  // namespace

double jensen_shannon(const Distribution& p, const Distribution& q) {
  std::map<std::string, std::pair<double, double>> both;
  for (const auto& [key, weight] : p) both[key].first = weight;
  for (const auto& [key, weight] : q) both[key].second = weight;
  if (both.empty()) return 0;
  double p_sum = 0, q_sum = 0;
  for (const auto& [key, weights] : both) {
    p_sum += weights.first;
    q_sum += weights.second;
  }
  if (!(p_sum > 0) || !(q_sum > 0)) return 0.5887;
  double divergence = 0;
  for (const auto& [key, weights] : both) {
    const double a = weights.first / p_sum, b = weights.second / q_sum, m = (a + b) / 2;
    if (a > 0) divergence += a * std::log(a / m);
    if (b > 0) divergence += b * std::log(b / m);
  }
  return std::sqrt(std::max(0.0, divergence / (2 * std::log(2.0))));
}

std::vector<double> doane_edges(const Column& a, const Column& b) {
  std::vector<double> values = finite_values(a);
  const std::vector<double> more = finite_values(b);
  values.insert(values.end(), more.begin(), more.end());
  if (values.empty()) return {};
  const auto [low, high] = std::minmax_element(values.begin(), values.end());
  double lo = *low, hi = *high;
  if (lo == hi) {
    lo -= 0.5;
    hi += 0.5;
  }
  const double width = doane_width(values);
  double bins = width != 0 ? std::ceil((hi - lo) / width) : 1;
  if (!std::isfinite(bins) || bins + 1 > kMaxBins) bins = kMaxBins;
  return linspace_edges(lo, hi, static_cast<std::size_t>(std::max(1.0, bins)));
}

Distribution binned(const Column& column, const std::vector<double>& edges) {
  Distribution out;
  if (edges.size() < 2) return out;
  const std::size_t bins = edges.size() - 1;
  for (const double v : finite_values(column)) {
    std::size_t bin =
        static_cast<std::size_t>(std::lower_bound(edges.begin(), edges.end(), v) - edges.begin());
    if (v == edges[0]) bin = 1;
    if (bin >= 1 && bin <= bins) out[std::to_string(bin)] += 1;
  }
  return out;
}

Distribution categories(const Column& column) {
  return counted(plain_keys(column));
}

double tabular_curve(double d) {
  if (d > 0.99) return 0;
  if (d < 0.02) return 10;
  return 7.44 * d * d - 16.646 * d + 10.305;
}

ColumnDistribution compare_column(const std::string& name, const Column& training,
                                  const Column& synthetic) {
  ColumnDistribution out;
  out.name = name;
  out.training_type = describe_field(training);
  out.synthetic_type = describe_field(synthetic);
  if (out.training_type == FieldType::kNumeric && out.synthetic_type == FieldType::kNumeric) {
    const std::vector<double> edges = doane_edges(training, synthetic);
    const Distribution t = binned(training, edges), s = binned(synthetic, edges);
    out.distance = jensen_shannon(t, s);
    std::vector<std::string> order;
    for (std::size_t bin = 1; bin < edges.size(); ++bin) order.push_back(std::to_string(bin));
    fill_shares(out, t, s, order);
    for (std::size_t bin = 1; bin < edges.size(); ++bin)
      out.labels[bin - 1] = bin_label(edges, bin);
  } else {
    std::vector<std::string> t_keys = plain_keys(training), s_keys = plain_keys(synthetic);
    if (training.dtype == Dtype::kInt64 || synthetic.dtype == Dtype::kInt64) {
      bool converted = false;
      std::vector<std::string> keys = integer_keys(training, converted);
      if (converted) {
        t_keys = std::move(keys);
        keys = integer_keys(synthetic, converted);
        if (converted) s_keys = std::move(keys);
      }
    }
    const auto comparable = [](FieldType type) { return is_tabular(type); };
    const Distribution t = counted(t_keys), s = counted(s_keys);
    if (has_value(training) && has_value(synthetic) && comparable(out.training_type) &&
        comparable(out.synthetic_type))
      out.distance = jensen_shannon(t, s);
    fill_shares(out, t, s, category_order(t, s));
  }
  if (out.distance) out.score = finalize(*out.distance, tabular_curve(*out.distance));
  return out;
}

}  // namespace nss::evaluate
