#include "evaluate/attribute_inference.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <unordered_map>

#include "core/error.h"
#include "evaluate/field_type.h"
#include "evaluate/nearest_neighbors.h"
#include "evaluate/privacy_encoding.h"
#include "evaluate/score.h"

namespace nss::evaluate {
namespace {

constexpr int kQuasiIdentifierCount = 3;     // evaluation.quasi_identifier_count
constexpr std::size_t kWindowColumns = 500;  // from this many columns: sliding windows
constexpr std::uint32_t kCombinationSeed = 5, kAttackRowSeed = 1, kQuantileSeed = 0;
constexpr std::size_t kNeighbors = 5, kMinAttackRows = 200, kQuantiles = 1000;
constexpr double kWorstAccuracy = 0.7;  // a column's weighted accuracy is capped here

using Combination = std::array<std::uint16_t, kQuasiIdentifierCount>;

// numpy's pairwise summation (what Series.sum and ndarray.sum do).
double numpy_pairwise_sum(const double* a, std::size_t n) {
  if (n < 8) {
    double sum = -0.0;
    for (std::size_t i = 0; i < n; ++i) sum += a[i];
    return sum;
  }
  if (n <= 128) {
    double r[8];
    std::copy(a, a + 8, r);
    std::size_t i = 8;
    for (; i < n - n % 8; i += 8)
      for (std::size_t j = 0; j < 8; ++j) r[j] += a[i + j];
    double sum = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; ++i) sum += a[i];
    return sum;
  }
  std::size_t half = n / 2;
  half -= half % 8;
  return numpy_pairwise_sum(a, half) + numpy_pairwise_sum(a + half, n - half);
}

// itertools.combinations(range(columns), count) in order, or the sliding
// windows NSS uses from 500 columns on.
std::vector<Combination> quasi_identifier_combinations(std::size_t columns, int count) {
  std::vector<Combination> out;
  if (columns >= kWindowColumns) {
    for (std::size_t i = 0; i + count <= columns; ++i) {
      Combination c{};
      for (int j = 0; j < count; ++j) c[j] = static_cast<std::uint16_t>(i + j);
      out.push_back(c);
    }
    return out;
  }
  Combination c{};
  for (int j = 0; j < count; ++j) c[j] = static_cast<std::uint16_t>(j);
  for (;;) {
    out.push_back(c);
    int j = count - 1;  // the rightmost position that can still advance
    while (j >= 0 && c[j] == columns - static_cast<std::size_t>(count - j)) --j;
    if (j < 0) return out;
    ++c[j];
    for (int k = j + 1; k < count; ++k) c[k] = static_cast<std::uint16_t>(c[k - 1] + 1);
  }
}

// What the attack reads of the tables: per column, whether it is guessed
// by mean, whether it is float, and whether an object column holds Python
// bools (for the cells' Python-equality keys, made when needed).
struct AttackTables {
  const Table* training = nullptr;
  const Table* synthetic = nullptr;
  std::vector<bool> guessed_by_mean, float_column, training_bools, synthetic_bools;

  std::string training_key(std::size_t column, std::size_t row) const {
    return python_value_key(training->columns[column], row, training_bools[column]);
  }
  std::string synthetic_key(std::size_t column, std::size_t row) const {
    return python_value_key(synthetic->columns[column], row, synthetic_bools[column]);
  }
};

struct ColumnTally {
  std::vector<long> correct, incorrect;
};

// The mean of the neighbours' values (missing ones skipped; NaN when all
// are); a text column's mean fails in pandas, which NSS turns into 0.
double neighbours_mean(const AttackTables& at, std::size_t column,
                       const std::vector<std::size_t>& neighbours) {
  double sum = 0;
  std::size_t count = 0;
  for (const std::size_t row : neighbours) {
    const std::string key = at.synthetic_key(column, row);
    if (is_missing_key(key)) continue;
    const double value = key_number(key);
    if (std::isnan(value)) return 0.0;
    sum += value;
    ++count;
  }
  return count == 0 ? std::nan("") : sum / static_cast<double>(count);
}

// The neighbours' most frequent value (value_counts: ties to the first
// seen); empty when all are missing.
std::string neighbours_majority(const AttackTables& at, std::size_t column,
                                const std::vector<std::size_t>& neighbours) {
  std::vector<std::pair<std::string, int>> counts;
  for (const std::size_t row : neighbours) {
    const std::string key = at.synthetic_key(column, row);
    if (is_missing_key(key)) continue;
    auto it =
        std::find_if(counts.begin(), counts.end(), [&](const auto& c) { return c.first == key; });
    if (it == counts.end())
      counts.emplace_back(key, 1);
    else
      ++it->second;
  }
  const auto best =
      std::max_element(counts.begin(), counts.end(),
                       [](const auto& a, const auto& b) { return a.second < b.second; });
  return best == counts.end() ? std::string() : best->first;
}

// Scores the guesses of every column outside the quasi-identifiers for the
// training row `row` from its synthetic neighbours.
void tally_guesses(const AttackTables& at, std::size_t row, const Combination& combination,
                   int count, const std::vector<std::size_t>& neighbours, ColumnTally& tally) {
  for (std::size_t c = 0; c < at.training->columns.size(); ++c) {
    bool quasi_identifier = false;
    for (int q = 0; q < count; ++q) quasi_identifier = quasi_identifier || combination[q] == c;
    if (quasi_identifier) continue;
    const std::string truth = at.training_key(c, row);
    if (is_missing_key(truth)) continue;
    bool correct;
    if (at.guessed_by_mean[c]) {
      const double value = key_number(truth);
      const double guess = neighbours_mean(at, c, neighbours);
      correct = std::fabs(guess - value) < numeric_tolerance(value, at.float_column[c]) * value;
    } else {
      correct = neighbours_majority(at, c, neighbours) == truth;
    }
    ++(correct ? tally.correct : tally.incorrect)[c];
  }
}

// One attack: the training row's quasi-identifiers against the synthetic
// rows complete on them, quantile-normalised together; returns false when
// the row misses a quasi-identifier (skipped).
bool attack_row(const AttackTables& at, std::size_t row, const Combination& combination, int count,
                unsigned emulated_threads, ColumnTally& tally) {
  const std::vector<std::size_t> columns(combination.begin(), combination.begin() + count);
  for (const std::size_t c : columns)
    if (at.training->columns[c].is_missing(row)) return false;
  std::vector<std::size_t> complete;
  for (std::size_t r = 0; r < at.synthetic->rows; ++r) {
    const bool has_all = std::none_of(columns.begin(), columns.end(), [&](std::size_t c) {
      return at.synthetic->columns[c].is_missing(r);
    });
    if (has_all) complete.push_back(r);
  }
  FeatureColumns features =
      encode_stacked_rows({{at.training, {row}}, {at.synthetic, complete}}, columns, std::nan(""));
  LegacyRandom quantile_rng(kQuantileSeed);
  quantile_transform(features, std::min(kQuantiles, features.rows),
                     quantile_fit_rows(features.rows, quantile_rng));
  const FeatureRows query = to_float_rows(features, 0, 1);
  // NSS takes the neighbours' positions among the complete rows as
  // positions in the whole synthetic table (iloc): reproduced.
  const std::vector<std::size_t> neighbours = k_nearest_rows(
      query.row(0), to_float_rows(features, 1, complete.size()), kNeighbors, emulated_threads);
  tally_guesses(at, row, combination, count, neighbours, tally);
  return true;
}

AttackTables attack_tables(const EvaluationTables& tables) {
  AttackTables at;
  at.training = &tables.training;
  at.synthetic = &tables.synthetic;
  for (const Column& column : tables.training.columns) {
    const bool numeric = column.dtype == Dtype::kInt64 || column.dtype == Dtype::kFloat64;
    at.guessed_by_mean.push_back(numeric && !name_looks_categorical(column.name));
    at.float_column.push_back(column.dtype == Dtype::kFloat64);
    at.training_bools.push_back(holds_python_bools(column));
  }
  for (const Column& column : tables.synthetic.columns)
    at.synthetic_bools.push_back(holds_python_bools(column));
  return at;
}

std::vector<std::string> text_columns(const EvaluationTables& tables) {
  std::vector<std::string> names;
  for (std::size_t c = 0; c < tables.training.columns.size(); ++c)
    if (tables.training_types[c] == FieldType::kText)
      names.push_back(tables.training.columns[c].name);
  return names;
}

// Accuracy per column weighted by normalised entropy, capped at 0.7 and
// mapped to a 0-10 risk; the score is their mean (NSS's roundings).
void score_columns(const Table& training, const ColumnTally& tally, AttributeResult& result) {
  const std::size_t n = training.columns.size();
  std::vector<double> accuracy(n, 0.0), entropy(n);
  for (std::size_t c = 0; c < n; ++c) {
    const long assessed = tally.correct[c] + tally.incorrect[c];
    if (assessed > 0)
      accuracy[c] = python_round(static_cast<double>(tally.correct[c]) / assessed, 2);
    entropy[c] = numpy_round(column_entropy(training.columns[c]), 2);
  }
  const auto [low, high] = std::minmax_element(entropy.begin(), entropy.end());
  std::vector<double> weights(n, 0.0);
  if (*high != *low) {
    for (std::size_t c = 0; c < n; ++c) weights[c] = (entropy[c] - *low) / (*high - *low);
    const double sum = numpy_pairwise_sum(weights.data(), n);
    for (double& w : weights) w /= sum;
  }
  double total = 0;
  for (std::size_t c = 0; c < n; ++c) {
    const double weighted =
        std::min(numpy_round(accuracy[c] * weights[c], 4) * static_cast<double>(n), kWorstAccuracy);
    const double risk = (kWorstAccuracy - weighted) / kWorstAccuracy * 10;
    result.columns.push_back(
        {training.columns[c].name, accuracy[c], weights[c], risk, score_to_grade(risk)});
    total += risk;
  }
  const double mean = numpy_round(total / static_cast<double>(n), 2);
  result.score.raw = total;
  result.score.score = numpy_round(mean, 1);
  result.score.grade = score_to_grade(mean);
}

}  // namespace

bool name_looks_categorical(const std::string& name) {
  static const char* const kTokens[] = {"class",    "code",   "cpt",  "csn",       "date", "end",
                                        "icd",      "id",     "key",  "mrn",       "nbr",  "number",
                                        "postcode", "start",  "time", "timestamp", "year", "yr",
                                        "yyyy",     "yyyymm", "zip",  "zipcode"};
  std::vector<std::string> parts{name};
  for (const char separator : {'_', ' ', '-', '.'}) {
    if (name.find(separator) == std::string::npos) continue;
    parts.clear();
    std::size_t start = 0;
    for (std::size_t at; (at = name.find(separator, start)) != std::string::npos; start = at + 1)
      parts.push_back(name.substr(start, at - start));
    parts.push_back(name.substr(start));
    break;
  }
  const auto upper = [](char c) { return c >= 'A' && c <= 'Z'; };
  const auto lower = [](char c) { return c >= 'a' && c <= 'z'; };
  for (const std::string& part : parts) {
    std::string runs;  // a space before every run of capitals
    for (std::size_t i = 0; i < part.size(); ++i) {
      if (upper(part[i]) && (i == 0 || !upper(part[i - 1]))) runs += ' ';
      runs += part[i];
    }
    std::string words;  // a space before every capital followed by lowercase
    for (std::size_t i = 0; i < runs.size();) {
      if (upper(runs[i]) && i + 1 < runs.size() && lower(runs[i + 1])) {
        std::size_t end = i + 1;
        while (end < runs.size() && lower(runs[end])) ++end;
        words += ' ' + runs.substr(i, end - i);
        i = end;
      } else {
        words += runs[i++];
      }
    }
    std::string token;
    for (std::size_t i = 0; i <= words.size(); ++i) {
      const unsigned char c = i < words.size() ? words[i] : ' ';
      if (!std::isspace(c) && !(c >= 0x1c && c <= 0x1f)) {
        token += static_cast<char>(std::tolower(c));
        continue;
      }
      for (const char* keyword : kTokens)
        if (token == keyword) return true;
      token.clear();
    }
  }
  return false;
}

double numeric_tolerance(double value, bool float_column) {
  double tolerance = 0.01;
  if (!float_column || !std::isfinite(value) || value == std::floor(value)) return tolerance;
  // value = mantissa * 2^exponent with an odd mantissa: its exact decimal
  // expansion has -exponent digits after the point.
  int exponent = 0;
  auto mantissa =
      static_cast<std::int64_t>(std::ldexp(std::frexp(std::fabs(value), &exponent), 53));
  exponent -= 53;
  while (mantissa % 2 == 0) mantissa /= 2, ++exponent;
  for (int digit = 0; digit < -exponent; ++digit) tolerance /= 10;
  return tolerance;
}

double column_entropy(const Column& column) {
  std::unordered_map<std::string, std::size_t> slot;
  std::vector<double> counts;  // in order of first appearance
  const bool python_bools = holds_python_bools(column);
  for (std::size_t r = 0; r < column.rows(); ++r) {
    if (column.is_missing(r)) continue;
    const auto [it, added] = slot.emplace(python_value_key(column, r, python_bools), counts.size());
    if (added) counts.push_back(0);
    counts[it->second] += 1;
  }
  const double total = numpy_pairwise_sum(counts.data(), counts.size());
  std::vector<double> terms;
  for (const double count : counts) {
    const double p = count / total;
    terms.push_back(p * std::log(p));  // NSS divides by log(e), which is 1.0
  }
  return -numpy_pairwise_sum(terms.data(), terms.size());
}

AttributeResult measure_attribute_inference(const EvaluationTables& tables,
                                            LegacyRandom& global_rng, unsigned emulated_threads) {
  AttributeResult result;
  const Table& training = tables.training;
  const std::size_t n = training.columns.size();
  const int count = n < kQuasiIdentifierCount + 1 ? static_cast<int>(n) - 1 : kQuasiIdentifierCount;
  if (count <= 0) {
    result.score = unavailable();
    return result;
  }
  result.quasi_identifiers = count;
  std::vector<Combination> combinations = quasi_identifier_combinations(n, count);
  global_rng = LegacyRandom(kCombinationSeed);  // np.random.seed(5)
  global_rng.shuffle(combinations);
  if (const auto texts = text_columns(tables); !texts.empty()) {
    std::string listed;
    for (const auto& name : texts) listed += (listed.empty() ? "" : ", ") + name;
    result.score = unavailable(
        "Attribute Inference Protection needs a sentence-embedding model for the text "
        "column(s) " +
        listed + "; nss_evaluate does not load one");
    return result;
  }
  const AttackTables at = attack_tables(tables);
  ColumnTally tally{std::vector<long>(n, 0), std::vector<long>(n, 0)};
  LegacyRandom row_rng(kAttackRowSeed);
  const std::size_t attacks =
      std::max(static_cast<std::size_t>(static_cast<double>(training.rows) * 0.01), kMinAttackRows);
  std::vector<std::size_t> rows(attacks);  // training.sample(attacks, replace=True, random_state=1)
  for (std::size_t& row : rows) row = static_cast<std::size_t>(row_rng.interval(training.rows - 1));
  try {
    for (std::size_t i = 0; i < rows.size() && i < combinations.size(); ++i)
      if (attack_row(at, rows[i], combinations[i], count, emulated_threads, tally))
        ++result.attacked_rows;
  } catch (const Error& e) {
    result.score = unavailable(e.message());
    return result;
  }
  score_columns(training, tally, result);
  return result;
}

}  // namespace nss::evaluate
