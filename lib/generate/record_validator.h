// Synthetic records checked against the table a model was fine-tuned on,
// without the table: the schema nss_prepare_data --format records stored in
// the token file (records_schema, docs/data.md) says which columns there are,
// which held numbers, and which had empty cells. A completion holds one JSON
// object per line (several for a grouped example); each is valid when it has
// exactly the schema's columns, a JSON number in every number column, a
// string or number in every other column (a string of ASCII digits, or a
// missing-value spelling the column held, where every text cell of the
// table was one of those), and an empty cell ("") only where the table had
// one.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace nss::generate {

/// How long a column's values may be when a model writes them (--constrain
/// schema): the longest of the column's cells when the data was prepared
/// (records_schema's max_* keys; 0: none of that kind there), else these
/// defaults (data prepared before the bounds were recorded).
struct ValueLimits {
  std::int32_t string_chars = 256;    // characters of a string cell (an escape is one)
  std::int32_t integer_digits = 20;   // digits before a number's point
  std::int32_t fraction_digits = 20;  // digits after it
  std::int32_t exponent_digits = 2;   // digits of its exponent (at most 2: a double holds 1e99)
};

struct RecordSchema {
  struct Column {
    Column() = default;
    Column(std::string column_name, bool is_number, bool has_empty_cells)
        : name(std::move(column_name)), number(is_number), empty_cells(has_empty_cells) {}

    std::string name;
    bool number = false;       // every non-empty cell was a JSON number literal
    bool empty_cells = false;  // some cell was empty
    // Every text cell was ASCII digits ("06647") or one of missing_values
    // ("NA"; records_schema's "digit_strings" and "missing_values", absent
    // in data prepared before them: false, none).
    bool digit_strings = false;
    std::vector<std::string> missing_values;
    ValueLimits limits;
    bool limits_recorded = false;  // from the schema, not the defaults
    // A text column's few distinct values when the data was prepared
    // (records_schema's "categories"; none recorded: empty).
    std::vector<std::string> categories;
  };
  std::vector<Column> columns;

  /// Parses the records_schema attribute; DataError naming what is wrong.
  static RecordSchema from_json(const std::string& text);
};

/// One line of a completion, judged.
struct CheckedRecord {
  std::string line;  // as generated (without the newline)
  bool valid = false;
  std::string reason;             // why not, e.g. "column age: \"x\" is not a number"
  nlohmann::ordered_json record;  // the parsed object, when the line was JSON
};

/// Every non-blank line of `completion`, judged against `schema`.
std::vector<CheckedRecord> check_completion(const RecordSchema& schema,
                                            std::string_view completion);

/// The schema's column names as a CSV header line (with its newline).
std::string csv_header(const RecordSchema& schema);

/// A valid record as a CSV line in the schema's column order (RFC 4180
/// quoting; numbers as JSON writes them).
std::string csv_line(const RecordSchema& schema, const nlohmann::ordered_json& record);

}  // namespace nss::generate
