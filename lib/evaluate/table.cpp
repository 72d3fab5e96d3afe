#include "evaluate/table.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "core/error.h"
#include "core/missing_cell.h"
#include "data/csv_records.h"
#include "data/input_file.h"

namespace nss::evaluate {
namespace {

std::string trimmed(const std::string& cell) {
  const auto first = cell.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  return cell.substr(first, cell.find_last_not_of(" \t") - first + 1);
}

bool parse_int(const std::string& cell, double& out) {
  const std::string text = trimmed(cell);
  std::size_t i = (!text.empty() && (text[0] == '-' || text[0] == '+')) ? 1 : 0;
  if (i == text.size()) return false;
  for (std::size_t j = i; j < text.size(); ++j)
    if (text[j] < '0' || text[j] > '9') return false;
  errno = 0;
  const long long value = std::strtoll(text.c_str(), nullptr, 10);
  if (errno == ERANGE) return false;  // beyond int64: pandas leaves it to float or object
  out = static_cast<double>(value);
  return true;
}

// Powers of ten as the C literals 1e0 ... 1e308 are: correctly rounded.
const std::vector<double>& powers_of_ten() {
  static const std::vector<double> powers = [] {
    std::vector<double> p;
    for (int k = 0; k <= 308; ++k)
      p.push_back(std::strtod(("1e" + std::to_string(k)).c_str(), nullptr));
    return p;
  }();
  return powers;
}

// pandas' default float parser (precise_xstrtod): at most 17 significant
// digits, leading zeros included, summed in a double, then scaled by a power
// of ten. It can differ from a correctly rounded strtod in the last bit,
// which moves values that sit on a histogram edge: the reference's bins
// are those of pandas' values. (x86-64 without FMA: each step rounds as in C.)
bool pandas_strtod(const std::string& text, double& out) {
  constexpr int kMaxDigits = 17;
  std::size_t i = 0;
  const bool negative = i < text.size() && text[i] == '-';
  if (i < text.size() && (text[i] == '-' || text[i] == '+')) ++i;
  double number = 0;
  int exponent = 0, digits = 0, decimals = 0;
  const auto digit = [&](std::size_t at) {
    return at < text.size() && text[at] >= '0' && text[at] <= '9';
  };
  for (; digit(i); ++i) {
    if (digits < kMaxDigits) {
      number = number * 10. + (text[i] - '0');
      ++digits;
    } else {
      ++exponent;
    }
  }
  int seen = digits + exponent;
  if (i < text.size() && text[i] == '.') {
    ++i;
    for (; digits < kMaxDigits && digit(i); ++i, ++digits, ++decimals, ++seen)
      number = number * 10. + (text[i] - '0');
    for (; digit(i); ++i) ++seen;
    exponent -= decimals;
  }
  if (seen == 0) return false;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    const bool minus = i < text.size() && text[i] == '-';
    if (i < text.size() && (text[i] == '-' || text[i] == '+')) ++i;
    if (!digit(i)) return false;
    long n = 0;
    for (; digit(i); ++i) n = std::min(n * 10 + (text[i] - '0'), 100000L);
    exponent += static_cast<int>(minus ? -n : n);
  }
  if (i != text.size()) return false;
  const auto& e = powers_of_ten();
  if (exponent > 308) {
    number = number == 0 ? 0 : HUGE_VAL;
  } else if (exponent > 0) {
    number *= e[static_cast<std::size_t>(exponent)];
  } else if (exponent < -308) {
    if (exponent < -616) {
      number = 0;
    } else {
      number /= e[static_cast<std::size_t>(-308 - exponent)];
      number /= e[308];
    }
  } else {
    number /= e[static_cast<std::size_t>(-exponent)];
  }
  out = negative ? -number : number;
  return true;
}

bool parse_float(const std::string& cell, double& out) {
  const std::string text = trimmed(cell);
  if (text.empty()) return false;
  std::string lower;
  for (char c : text) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const auto& [spelling, value] : {std::pair<const char*, double>{"inf", HUGE_VAL},
                                        {"+inf", HUGE_VAL},
                                        {"-inf", -HUGE_VAL},
                                        {"infinity", HUGE_VAL},
                                        {"+infinity", HUGE_VAL},
                                        {"-infinity", -HUGE_VAL}})
    if (lower == spelling) {
      out = value;
      return true;
    }
  return pandas_strtod(text, out);
}

bool parse_bool(const std::string& cell, double& out) {
  if (cell == "True" || cell == "TRUE" || cell == "true") {
    out = 1;
    return true;
  }
  if (cell == "False" || cell == "FALSE" || cell == "false") {
    out = 0;
    return true;
  }
  return false;
}

// One column's dtype and values from its cells, pandas' inference order:
// int64 (no missing cell), bool (no missing cell), float64, else object.
Column type_column(const std::string& name, const std::vector<const std::string*>& cells) {
  Column column;
  column.name = name;
  const std::size_t rows = cells.size();
  column.missing.assign(rows, 0);
  bool any_missing = false;
  for (std::size_t r = 0; r < rows; ++r) {
    column.missing[r] = is_missing_cell(*cells[r]) ? 1 : 0;
    any_missing = any_missing || column.missing[r];
  }
  const auto all = [&](bool (*parse)(const std::string&, double&)) {
    std::vector<double> values(rows, std::nan(""));
    for (std::size_t r = 0; r < rows; ++r)
      if (!column.missing[r] && !parse(*cells[r], values[r])) return false;
    column.numbers = std::move(values);
    return true;
  };
  if (!any_missing && all(parse_int)) {
    column.dtype = Dtype::kInt64;
  } else if (!any_missing && all(parse_bool)) {
    column.dtype = Dtype::kBool;
  } else if (all(parse_float)) {
    column.dtype = Dtype::kFloat64;
  } else {
    column.dtype = Dtype::kObject;
    column.texts.resize(rows);
    double flag = 0;
    std::size_t bools = 0, present = 0;
    for (std::size_t r = 0; r < rows; ++r) {
      if (column.missing[r]) continue;
      ++present;
      bools += parse_bool(*cells[r], flag);
      column.texts[r] = *cells[r];
    }
    // A bool column with missing cells holds Python True/False objects.
    if (bools == present)
      for (std::size_t r = 0; r < rows; ++r)
        if (!column.missing[r] && parse_bool(*cells[r], flag))
          column.texts[r] = flag != 0 ? "True" : "False";
  }
  return column;
}

}  // namespace

bool reads_as_number(const std::string& cell) {
  double value = 0;
  return parse_float(cell, value) || parse_bool(cell, value);
}

std::string python_float_repr(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  if (value == 0) return std::signbit(value) ? "-0.0" : "0.0";
  char digits[64];
  int precision = 1;
  for (; precision <= 17; ++precision) {
    std::snprintf(digits, sizeof digits, "%.*e", precision - 1, value);
    if (std::strtod(digits, nullptr) == value) break;
  }
  // digits: [-]d[.ddd]e[+-]XX
  std::string text(digits);
  const bool negative = text[0] == '-';
  if (negative) text.erase(0, 1);
  const auto e = text.find('e');
  const int exponent = std::atoi(text.c_str() + e + 1);
  std::string mantissa = text.substr(0, e);
  mantissa.erase(std::remove(mantissa.begin(), mantissa.end(), '.'), mantissa.end());
  std::string out;
  if (exponent >= -4 && exponent < 16) {
    if (exponent >= 0) {
      if (static_cast<int>(mantissa.size()) <= exponent + 1) {
        out = mantissa +
              std::string(static_cast<std::size_t>(exponent + 1) - mantissa.size(), '0') + ".0";
      } else {
        out = mantissa.substr(0, static_cast<std::size_t>(exponent + 1)) + "." +
              mantissa.substr(static_cast<std::size_t>(exponent + 1));
      }
    } else {
      out = "0." + std::string(static_cast<std::size_t>(-exponent - 1), '0') + mantissa;
    }
  } else {
    out = mantissa.substr(0, 1) + (mantissa.size() > 1 ? "." + mantissa.substr(1) : "");
    char exp[16];
    std::snprintf(exp, sizeof exp, "e%c%02d", exponent < 0 ? '-' : '+', std::abs(exponent));
    out += exp;
  }
  return (negative ? "-" : "") + out;
}

std::string Column::key(std::size_t row) const {
  switch (dtype) {
    case Dtype::kObject:
      return missing[row] ? "nan" : texts[row];
    case Dtype::kBool:
      return numbers[row] != 0 ? "True" : "False";
    case Dtype::kInt64: {
      char text[32];
      std::snprintf(text, sizeof text, "%lld", static_cast<long long>(numbers[row]));
      return text;
    }
    case Dtype::kFloat64:
      return python_float_repr(numbers[row]);
  }
  return "";
}

std::ptrdiff_t Table::index_of(const std::string& name) const {
  for (std::size_t c = 0; c < columns.size(); ++c)
    if (columns[c].name == name) return static_cast<std::ptrdiff_t>(c);
  return -1;
}

Table make_table(const std::vector<std::string>& header,
                 const std::vector<std::vector<std::string>>& rows, std::string path) {
  Table table;
  table.path = std::move(path);
  table.rows = rows.size();
  std::vector<const std::string*> cells(rows.size());
  for (std::size_t c = 0; c < header.size(); ++c) {
    for (std::size_t r = 0; r < rows.size(); ++r) cells[r] = &rows[r][c];
    table.columns.push_back(type_column(header[c], cells));
  }
  return table;
}

Table read_table(const std::string& path, const char* flag, std::size_t max_cell_bytes) {
  std::ifstream in = data::open_input(path, flag);
  data::skip_bom(in);
  data::CsvReader reader(in, path);
  const std::vector<std::string> header = data::read_csv_header(reader, path);
  for (std::size_t c = 0; c < header.size(); ++c)
    if (header[c].find_first_not_of(" \t") == std::string::npos)
      throw DataError(
          "evaluate",
          path + ":1: the CSV header's column " + std::to_string(c + 1) + " has no name",
          "name every column: columns are matched by name");
  std::vector<std::vector<std::string>> rows;
  std::vector<std::int64_t> lines;
  std::vector<std::string> row;
  while (data::next_csv_row(reader, header, row, path)) {
    for (std::size_t c = 0; c < row.size(); ++c)
      if (row[c].size() > max_cell_bytes)
        throw DataError("evaluate",
                        path + ":" + std::to_string(reader.record_line()) + ": column " +
                            header[c] + " holds a cell of " + std::to_string(row[c].size()) +
                            " bytes, more than " + std::to_string(max_cell_bytes),
                        "a table cell this long is not a record field: check the file");
    rows.push_back(row);
    lines.push_back(reader.record_line());
  }
  data::check_read(in, path);
  if (rows.empty())
    throw DataError("evaluate", path + " has a CSV header but no rows",
                    "evaluate tables that hold at least one row");
  Table table = make_table(header, rows, path);
  table.lines = std::move(lines);
  return table;
}

Table take_rows(const Table& table, const std::vector<std::size_t>& order) {
  Table out;
  out.path = table.path;
  out.rows = order.size();
  if (!table.lines.empty())
    for (const std::size_t r : order) out.lines.push_back(table.lines[r]);
  for (const Column& column : table.columns) {
    Column taken;
    taken.name = column.name;
    taken.dtype = column.dtype;
    for (const std::size_t r : order) {
      taken.missing.push_back(column.missing[r]);
      if (!column.numbers.empty()) taken.numbers.push_back(column.numbers[r]);
      if (!column.texts.empty()) taken.texts.push_back(column.texts[r]);
    }
    out.columns.push_back(std::move(taken));
  }
  return out;
}

}  // namespace nss::evaluate
