// A CSV table as NeMo Safe Synthesizer's evaluation sees it after pandas'
// read_csv: each column typed int64, float64, bool or object from its cells
// (pandas' default missing-value spellings are missing), numbers held as
// doubles and object cells as their text. docs/evaluate.md lists the rules.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace nss::evaluate {

enum class Dtype { kInt64, kFloat64, kBool, kObject };

struct Column {
  std::string name;
  Dtype dtype = Dtype::kObject;
  std::vector<double> numbers;     // int64, float64, bool (0/1): NaN when missing
  std::vector<std::string> texts;  // object: the cell's text ("" when missing)
  std::vector<char> missing;       // per row

  std::size_t rows() const { return missing.size(); }
  bool numeric() const { return dtype != Dtype::kObject; }  // pandas is_numeric_dtype
  bool is_missing(std::size_t row) const { return missing[row] != 0; }
  /// str(value) as pandas prints it: object text verbatim, a float as
  /// Python's repr ("1.5", "3.0", "nan"), an int in decimal, "True"/"False".
  std::string key(std::size_t row) const;
};

struct Table {
  std::string path;  // for messages
  std::vector<Column> columns;
  std::size_t rows = 0;
  std::vector<std::int64_t> lines;  // the line each row starts on (read_table), for messages

  /// The index of the column `name`, or -1.
  std::ptrdiff_t index_of(const std::string& name) const;
};

/// True when pandas reads the non-missing `cell` alone as a number (or a
/// bool): a column of such cells has a numeric dtype.
bool reads_as_number(const std::string& cell);

/// Reads the CSV `path` (named by the option `flag` in messages) with a
/// header (RFC 4180, as nss_prepare_data reads one). DataError naming file
/// and line for a missing, unreadable or ragged file, a duplicate or empty
/// column name, no rows, or a cell longer than `max_cell_bytes`.
Table read_table(const std::string& path, const char* flag,
                 std::size_t max_cell_bytes = std::size_t{1} << 20);

/// The table of `rows` cells per column (named, typed) from raw text: what
/// read_table does after parsing.
Table make_table(const std::vector<std::string>& header,
                 const std::vector<std::vector<std::string>>& rows, std::string path = "");

/// The rows `order` of `table`, in that order.
Table take_rows(const Table& table, const std::vector<std::size_t>& order);

/// Python's repr of a double: the shortest text that reads back to it.
std::string python_float_repr(double value);

}  // namespace nss::evaluate
