// scripts/bench/constraint_fidelity.sh's program: how far apart two tables
// with the same columns are, column by column, in the Jensen-Shannon
// distance nss_evaluate's column distribution stability uses:
//
//   column_gap A.csv B.csv [--bootstrap 1000] [--seed 1]
//
// Both files are read and sampled down to the same row count as nss_evaluate
// does (A in the training role). Prints JSON: per column its name, types, the
// distance compare_column gives (null where nss_evaluate leaves the column
// out), the distance measured (that one, else the value frequencies'), its
// 95% bootstrap interval (rows of both tables resampled with replacement,
// 2.5th and 97.5th percentiles), the same distance between two random
// halves of A and of B as noise floors and between a half of A and a half
// of B (the gap at the floors' row count), each a mean over as many random
// splits as bootstrap draws; and the row counts.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <numeric>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/app_main.h"
#include "core/error.h"
#include "evaluate/distribution.h"
#include "evaluate/evaluation_tables.h"
#include "evaluate/field_type.h"
#include "evaluate/table.h"

namespace {

using nss::evaluate::Column;
using nss::evaluate::Table;

struct Options {
  std::string a, b;
  int bootstrap = 1000;
  std::uint32_t seed = 1;
};

Options parse(int argc, char** argv) {
  const auto usage = [](const std::string& what) {
    return nss::UsageError("column_gap", what,
                           "usage: column_gap A.csv B.csv [--bootstrap 1000] [--seed 1]");
  };
  Options options;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--bootstrap" || arg == "--seed") {
      if (i + 1 == argc) throw usage(arg + " needs a value");
      const std::string text = argv[++i];
      std::size_t used = 0;
      long value = -1;
      try {
        value = std::stol(text, &used);
      } catch (const std::logic_error&) {
      }
      if (value < 0 || used != text.size()) throw usage(arg + " " + text + ": not a count");
      if (arg == "--bootstrap")
        options.bootstrap = static_cast<int>(value);
      else
        options.seed = static_cast<std::uint32_t>(value);
    } else if (arg.rfind("--", 0) == 0) {
      throw usage("unknown option " + arg);
    } else {
      files.push_back(arg);
    }
  }
  if (files.size() != 2) throw usage("two CSV files are needed");
  options.a = files[0];
  options.b = files[1];
  return options;
}

/// The `q` quantile with linear interpolation (numpy's default), of a
/// non-empty list.
double quantile(std::vector<double> values, double q) {
  std::sort(values.begin(), values.end());
  const double at = q * static_cast<double>(values.size() - 1);
  const auto low = static_cast<std::size_t>(std::floor(at));
  const std::size_t high = std::min(low + 1, values.size() - 1);
  return values[low] + (at - static_cast<double>(low)) * (values[high] - values[low]);
}

std::vector<std::size_t> resampled(std::size_t rows, std::mt19937_64& rng) {
  std::uniform_int_distribution<std::size_t> pick(0, rows - 1);
  std::vector<std::size_t> order(rows);
  for (auto& row : order) row = pick(rng);
  return order;
}

nlohmann::ordered_json distance_json(const std::optional<double>& distance) {
  return distance ? nlohmann::ordered_json(*distance) : nlohmann::ordered_json(nullptr);
}

/// The distance compare_column gives when nss_evaluate compares the column
/// (`evaluated`); otherwise (a side typed other, text or empty) the distance
/// of the value frequencies, so a column of invented values still shows how
/// far it moved.
std::optional<double> measured(const Column& a, const Column& b, bool evaluated) {
  if (evaluated) return nss::evaluate::compare_column(a.name, a, b).distance;
  return nss::evaluate::jensen_shannon(nss::evaluate::categories(a), nss::evaluate::categories(b));
}

/// Per column, the distances of `resamples` bootstrap draws; a draw whose
/// column is not comparable (resampling can change a column's type) is left
/// out. A distance cannot go below 0, so near 0 the draws sit above the
/// point estimate: the noise floor says how far.
std::vector<std::vector<double>> bootstrap(const Table& a, const Table& b,
                                           const std::vector<char>& evaluated, int resamples,
                                           std::mt19937_64& rng) {
  std::vector<std::vector<double>> out(a.columns.size());
  for (int draw = 0; draw < resamples; ++draw) {
    const Table ra = nss::evaluate::take_rows(a, resampled(a.rows, rng));
    const Table rb = nss::evaluate::take_rows(b, resampled(b.rows, rng));
    for (std::size_t c = 0; c < a.columns.size(); ++c)
      if (const auto d = measured(ra.columns[c], rb.columns[c], evaluated[c])) out[c].push_back(*d);
  }
  return out;
}

/// `table`'s rows split at random into two halves.
std::pair<Table, Table> halves(const Table& table, std::mt19937_64& rng) {
  std::vector<std::size_t> order(table.rows);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::shuffle(order.begin(), order.end(), rng);
  const auto half = static_cast<std::ptrdiff_t>(table.rows / 2);
  return {nss::evaluate::take_rows(table, {order.begin(), order.begin() + half}),
          nss::evaluate::take_rows(table, {order.begin() + half, order.end()})};
}

/// Per column, the mean over `splits` random splits of the distance between
/// two halves of A and of B (noise floors: what two samples of one
/// distribution already differ by, higher for the table of more distinct
/// values) and between a half of A and a half of B (the gap at the floors'
/// row count: a distance of many-valued columns grows as rows get fewer).
/// Empty where no split gives a distance.
struct HalfRows {
  std::vector<std::optional<double>> floor_a, floor_b, gap;
};

std::optional<double> mean(const std::vector<double>& values) {
  if (values.empty()) return std::nullopt;
  return std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
}

HalfRows half_rows(const Table& a, const Table& b, const std::vector<char>& evaluated, int splits,
                   std::mt19937_64& rng) {
  const std::size_t columns = a.columns.size();
  std::vector<std::vector<double>> floors_a(columns), floors_b(columns), gaps(columns);
  const auto add = [&](std::vector<double>& to, const Column& x, const Column& y, std::size_t c) {
    if (const auto d = measured(x, y, evaluated[c])) to.push_back(*d);
  };
  for (int split = 0; split < std::max(splits, 1); ++split) {
    const auto [a1, a2] = halves(a, rng);
    const auto [b1, b2] = halves(b, rng);
    for (std::size_t c = 0; c < columns; ++c) {
      add(floors_a[c], a1.columns[c], a2.columns[c], c);
      add(floors_b[c], b1.columns[c], b2.columns[c], c);
      add(gaps[c], a1.columns[c], b1.columns[c], c);
    }
  }
  HalfRows out;
  for (std::size_t c = 0; c < columns; ++c) {
    out.floor_a.push_back(mean(floors_a[c]));
    out.floor_b.push_back(mean(floors_b[c]));
    out.gap.push_back(mean(gaps[c]));
  }
  return out;
}

nlohmann::ordered_json column_gap(const Options& options) {
  const Table read_a = nss::evaluate::read_table(options.a, "A");
  const Table read_b = nss::evaluate::read_table(options.b, "B");
  const auto tables = nss::evaluate::make_evaluation_tables(read_a, read_b, std::nullopt);
  const Table &a = tables.training, &b = tables.synthetic;
  std::vector<nss::evaluate::ColumnDistribution> compared;
  std::vector<char> evaluated;
  for (std::size_t c = 0; c < a.columns.size(); ++c) {
    compared.push_back(
        nss::evaluate::compare_column(a.columns[c].name, a.columns[c], b.columns[c]));
    evaluated.push_back(compared.back().distance.has_value());
  }
  std::mt19937_64 rng(options.seed);
  const auto draws = bootstrap(a, b, evaluated, options.bootstrap, rng);
  const HalfRows half = half_rows(a, b, evaluated, options.bootstrap, rng);
  nlohmann::ordered_json columns = nlohmann::ordered_json::array();
  for (std::size_t c = 0; c < a.columns.size(); ++c) {
    const auto& d = compared[c];
    const auto value = measured(a.columns[c], b.columns[c], evaluated[c]);
    nlohmann::ordered_json interval = nullptr;
    if (value && !draws[c].empty())
      interval = {quantile(draws[c], 0.025), quantile(draws[c], 0.975)};
    columns.push_back({{"name", d.name},
                       {"type", nss::evaluate::field_type_name(d.training_type)},
                       {"type_b", nss::evaluate::field_type_name(d.synthetic_type)},
                       {"distance", distance_json(d.distance)},
                       {"measure", evaluated[c] ? "compare_column" : "categories"},
                       {"measured", distance_json(value)},
                       {"interval_95", interval},
                       {"bootstrap_draws", draws[c].size()},
                       {"noise_floor", distance_json(half.floor_a[c])},
                       {"noise_floor_b", distance_json(half.floor_b[c])},
                       {"measured_half_rows", distance_json(half.gap[c])}});
  }
  return {{"a", options.a},
          {"b", options.b},
          {"rows_a", tables.training_rows_read},
          {"rows_b", tables.synthetic_rows_read},
          {"rows_compared", a.rows},
          {"bootstrap", options.bootstrap},
          {"seed", options.seed},
          {"columns", columns}};
}

}  // namespace

int main(int argc, char** argv) {
  return nss::run_app("column_gap", [&] {
    std::cout << column_gap(parse(argc, argv)).dump(2) << "\n";
    return nss::ExitCode::kOk;
  });
}
