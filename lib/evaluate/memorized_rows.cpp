#include "evaluate/memorized_rows.h"

#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <unordered_set>
#include <vector>

#include "evaluate/privacy_encoding.h"

namespace nss::evaluate {
namespace {

bool python_space(char c) {
  return c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f);
}

// Python's float(text): surrounding whitespace, a sign, digits with single
// underscores between them, a point, an exponent, or inf/infinity/nan.
bool parse_python_float(const std::string& text, double& out) {
  std::size_t first = 0, last = text.size();
  while (first < last && python_space(text[first])) ++first;
  while (last > first && python_space(text[last - 1])) --last;
  std::string body = text.substr(first, last - first);
  std::string lower;
  for (char c : body) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const std::size_t sign = (!lower.empty() && (lower[0] == '+' || lower[0] == '-')) ? 1 : 0;
  const std::string word = lower.substr(sign);
  if (word == "inf" || word == "infinity" || word == "nan") {
    out = word == "nan" ? std::nan("") : HUGE_VAL;
    if (sign && lower[0] == '-') out = -out;
    return true;
  }
  std::string plain;
  for (std::size_t i = 0; i < body.size(); ++i) {
    const char c = body[i];
    if (c == '_') {  // only between two digits
      if (i == 0 || i + 1 == body.size() ||
          !std::isdigit(static_cast<unsigned char>(body[i - 1])) ||
          !std::isdigit(static_cast<unsigned char>(body[i + 1])))
        return false;
      continue;
    }
    if (!(std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == 'e' || c == 'E' ||
          c == '+' || c == '-'))
      return false;
    plain += c;
  }
  if (plain.empty()) return false;
  char* end = nullptr;
  out = std::strtod(plain.c_str(), &end);
  return end == plain.c_str() + plain.size();
}

// The keys of one side's column as NSS compares it: as floats (`as_numbers`;
// an object column's texts read by float()) or as Python values.
std::vector<std::string> comparison_keys(const Column& column, bool as_numbers) {
  std::vector<std::string> keys(column.rows());
  const bool python_bools = holds_python_bools(column);
  for (std::size_t r = 0; r < column.rows(); ++r) {
    if (!as_numbers || column.numeric() || column.is_missing(r) || python_bools) {
      keys[r] = python_value_key(column, r, python_bools);
      continue;
    }
    double value = 0;
    parse_python_float(column.texts[r], value);
    keys[r] = number_value_key(value);
  }
  return keys;
}

// An object column whose every text reads as a float (NSS's astype(float)).
bool reads_as_floats(const Column& column) {
  if (column.numeric() || holds_python_bools(column)) return true;
  double value = 0;
  for (std::size_t r = 0; r < column.rows(); ++r)
    if (!column.is_missing(r) && !parse_python_float(column.texts[r], value)) return false;
  return true;
}

// Each row's cells on the shared columns, length-prefixed into one string.
std::vector<std::string> row_keys(const std::vector<std::vector<std::string>>& columns,
                                  std::size_t rows) {
  std::vector<std::string> out(rows);
  for (const auto& keys : columns)
    for (std::size_t r = 0; r < rows; ++r) {
      const auto length = static_cast<std::uint32_t>(keys[r].size());
      out[r].append(reinterpret_cast<const char*>(&length), sizeof length);
      out[r] += keys[r];
    }
  return out;
}

}  // namespace

std::size_t count_memorized_rows(const Table& training, const Table& synthetic) {
  std::vector<std::vector<std::string>> training_columns, synthetic_columns;
  for (const Column& left : training.columns) {
    const std::ptrdiff_t at = synthetic.index_of(left.name);
    if (at < 0) continue;
    const Column& right = synthetic.columns[static_cast<std::size_t>(at)];
    // Numeric on one side only: compared as floats when both read as floats.
    const bool as_numbers =
        left.numeric() != right.numeric() && reads_as_floats(left) && reads_as_floats(right);
    training_columns.push_back(comparison_keys(left, as_numbers));
    synthetic_columns.push_back(comparison_keys(right, as_numbers));
  }
  if (training_columns.empty()) return 0;
  const std::vector<std::string> training_rows = row_keys(training_columns, training.rows);
  const std::unordered_set<std::string> known(training_rows.begin(), training_rows.end());
  std::unordered_set<std::string> matched;
  for (const std::string& row : row_keys(synthetic_columns, synthetic.rows))
    if (known.count(row)) matched.insert(row);
  return matched.size();
}

int missing_percent(const Table& table) {
  const std::size_t cells = table.rows * table.columns.size();
  if (cells == 0) return 0;
  std::size_t missing = 0;
  for (const Column& column : table.columns)
    for (std::size_t r = 0; r < column.rows(); ++r) missing += column.is_missing(r) ? 1 : 0;
  return static_cast<int>(100.0 * static_cast<double>(missing) / static_cast<double>(cells));
}

DatasetStatistics dataset_statistics(const EvaluationTables& tables) {
  DatasetStatistics s;
  s.training_rows = tables.training.rows;
  s.synthetic_rows = tables.synthetic.rows;
  s.holdout_rows = tables.holdout ? tables.holdout->rows : 0;
  s.columns = tables.training.columns.size();
  s.training_rows_read = tables.training_rows_read;
  s.synthetic_rows_read = tables.synthetic_rows_read;
  s.columns_read = tables.columns_read;
  s.training_missing_percent = missing_percent(tables.training);
  s.synthetic_missing_percent = missing_percent(tables.synthetic);
  s.memorized_rows = count_memorized_rows(tables.training, tables.synthetic);
  return s;
}

}  // namespace nss::evaluate
