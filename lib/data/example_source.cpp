#include "data/example_source.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/missing_cell.h"
#include "core/utf8.h"
#include "data/csv_records.h"
#include "data/input_file.h"

namespace nss::data {

const char* const kRecordsTemplate =
    "Generate one record of the table as a JSON object with the fields {columns}.\n";
const char* const kGroupedRecordsTemplate =
    "Generate the records of one {group_by} group as JSON objects, one per line, with the "
    "fields {columns}.\n";

namespace {

struct Column {
  std::string name;
  bool number = true;  // every non-empty cell is a JSON number literal
  bool any_value = false;
  bool empty_cells = false;
  // Every cell that is not a number literal is ASCII digits ("06647") or a
  // missing-value spelling ("NA"): text that pandas, and so the evaluation,
  // reads as a number or as missing.
  bool digit_strings = true;
  bool any_string = false;
  std::set<std::string> missing_values;  // the spellings among those cells
  // The longest values (nss_generate --constrain schema bounds a model's by
  // them): characters of a cell written as a string, and the digits of each
  // part of a cell written as a number.
  std::size_t max_chars = 0, max_integer_digits = 0, max_fraction_digits = 0,
              max_exponent_digits = 0;
  std::set<std::string> values;  // distinct non-empty cells, while few enough to be categories
  std::size_t filled = 0;        // non-empty cells
  bool many_values = false;
};

// A text column of few distinct values (nss_generate --constrain-categories
// offers only these): at most 32, and at most half its non-empty cells.
constexpr std::size_t kMaxCategories = 32;

std::vector<std::string> categories(const Column& column) {
  if (column.number || column.many_values || column.max_integer_digits > 0 ||
      column.values.size() * 2 > column.filled)
    return {};
  return {column.values.begin(), column.values.end()};
}

// The digits of a JSON number literal's integer, fraction and exponent.
void note_number(const std::string& literal, Column& column) {
  const std::size_t start = literal[0] == '-' ? 1 : 0;
  const std::size_t point = literal.find('.'), e = literal.find_first_of("eE");
  const std::size_t integer_end =
      std::min(point, e) == std::string::npos ? literal.size() : std::min(point, e);
  column.max_integer_digits = std::max(column.max_integer_digits, integer_end - start);
  if (point != std::string::npos)
    column.max_fraction_digits = std::max(
        column.max_fraction_digits, (e == std::string::npos ? literal.size() : e) - point - 1);
  if (e != std::string::npos) {
    const std::size_t digits =
        e + 1 < literal.size() && (literal[e + 1] == '+' || literal[e + 1] == '-')
            ? literal.size() - e - 2
            : literal.size() - e - 1;
    column.max_exponent_digits = std::max(column.max_exponent_digits, digits);
  }
}

// Each column's type from its cells (a number when every non-empty cell is
// a JSON number literal) and its longest values.
std::vector<Column> infer_columns(const RecordsTable& table) {
  std::vector<Column> columns(table.header.size());
  for (std::size_t c = 0; c < table.header.size(); ++c) columns[c].name = table.header[c];
  for (const auto& row : table.rows) {
    for (std::size_t c = 0; c < row.size(); ++c) {
      Column& column = columns[c];
      if (row[c].empty()) {
        column.empty_cells = true;
        continue;
      }
      column.any_value = true;
      ++column.filled;
      if (!column.many_values && column.values.insert(row[c]).second &&
          column.values.size() > kMaxCategories) {
        column.many_values = true;
        column.values.clear();
      }
      const bool number = is_json_number(row[c]);
      column.number = column.number && number;
      if (number) {
        note_number(row[c], column);
        continue;
      }
      column.max_chars = std::max(column.max_chars, count_utf8_characters(row[c]));
      column.any_string = true;
      if (is_missing_cell(row[c]))
        column.missing_values.insert(row[c]);
      else
        column.digit_strings = column.digit_strings && is_ascii_digits(row[c]);
    }
  }
  return columns;
}

std::string schema_json(const std::vector<Column>& columns) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const Column& c : columns) {
    const bool digit_strings = c.any_string && c.digit_strings;
    const std::vector<std::string> missing_values =
        digit_strings ? std::vector<std::string>(c.missing_values.begin(), c.missing_values.end())
                      : std::vector<std::string>{};
    list.push_back({{"name", c.name},
                    {"type", c.number && c.any_value ? "number" : "string"},
                    {"empty_cells", c.empty_cells},
                    {"max_chars", c.max_chars},
                    {"max_integer_digits", c.max_integer_digits},
                    {"max_fraction_digits", c.max_fraction_digits},
                    {"max_exponent_digits", c.max_exponent_digits},
                    {"digit_strings", digit_strings},
                    {"missing_values", missing_values},
                    {"categories", categories(c)}});
  }
  return nlohmann::ordered_json{{"columns", list}}.dump();
}

// Rows of a group in order_by order: numbers numerically when the column is
// numeric, text byte-wise otherwise; empty cells last; ties keep file order.
void order_rows(std::vector<const std::vector<std::string>*>& rows, std::size_t column,
                bool numeric) {
  std::stable_sort(rows.begin(), rows.end(), [&](const auto* a, const auto* b) {
    const std::string& x = (*a)[column];
    const std::string& y = (*b)[column];
    if (x.empty() || y.empty()) return !x.empty() && y.empty();
    if (numeric) return std::strtod(x.c_str(), nullptr) < std::strtod(y.c_str(), nullptr);
    return x < y;
  });
}

}  // namespace

std::string render_prompt_template(const std::string& prompt_template,
                                   const std::vector<std::string>& columns,
                                   const RecordsOptions& options) {
  std::string names;
  for (const auto& column : columns) names += (names.empty() ? "" : ", ") + column;
  const std::map<std::string, std::string> values = {
      {"columns", names}, {"group_by", options.group_by}, {"order_by", options.order_by}};
  std::string out;
  for (std::size_t i = 0; i < prompt_template.size(); ++i) {
    const char c = prompt_template[i];
    const bool doubled = i + 1 < prompt_template.size() && prompt_template[i + 1] == c;
    if ((c == '{' || c == '}') && doubled) {
      out += c;
      ++i;
      continue;
    }
    if (c == '}')
      throw UsageError("data", "the prompt template has an unmatched '}'",
                       "write a literal brace as }} (or {{)");
    if (c != '{') {
      out += c;
      continue;
    }
    const std::size_t close = prompt_template.find('}', i);
    const std::string name =
        close == std::string::npos ? "" : prompt_template.substr(i + 1, close - i - 1);
    const auto value = values.find(name);
    if (value == values.end())
      throw UsageError("data",
                       "the prompt template has an unknown placeholder '{" + name +
                           (close == std::string::npos ? "" : "}") + "'",
                       "use {columns}, {group_by} or {order_by}; write literal braces as {{ }}");
    out += value->second;
    i = close;
  }
  return out;
}

std::size_t column_index(const std::vector<std::string>& header, const std::string& name,
                         const char* flag, const std::string& path) {
  const auto found = std::find(header.begin(), header.end(), name);
  if (found != header.end()) return static_cast<std::size_t>(found - header.begin());
  std::string names;
  for (const auto& column : header) names += (names.empty() ? "" : ", ") + column;
  throw UsageError("data", std::string(flag) + " " + name + ": " + path + " has no such column",
                   "choose one of: " + names);
}

ExampleSet read_sft_examples(const std::string& path) {
  ExampleSet set;
  set.preparation.format = "sft";
  const std::int64_t records =
      for_each_jsonl_record(path, [&](const nlohmann::ordered_json& record, std::int64_t line) {
        const auto text = [&](const char* key) -> const std::string& {
          const auto field = record.is_object() ? record.find(key) : record.end();
          if (field == record.end() || !field->is_string())
            throw DataError("data",
                            where(path, line) + ": an sft record needs a string \"" + key + "\"",
                            "write one {\"prompt\": \"...\", \"completion\": \"...\"} per line");
          return field->get_ref<const std::string&>();
        };
        set.examples.push_back({text("prompt"), text("completion")});
      });
  if (records == 0)
    throw DataError("data", "input " + path + " holds no sft records",
                    "remove it from the --input list");
  return set;
}

RecordsTable read_records_table(const std::string& path) {
  std::ifstream in = open_input(path);
  skip_bom(in);
  CsvReader reader(in, path);
  RecordsTable table;
  table.path = path;
  table.header = read_csv_header(reader, path);
  std::vector<std::string> row;
  while (next_csv_row(reader, table.header, row, path)) table.rows.push_back(row);
  check_read(in, path);
  if (table.rows.empty())
    throw DataError("data", "input " + path + " has a CSV header but no rows",
                    "remove it from the --input list");
  return table;
}

ExampleSet read_record_examples(const std::string& path, const RecordsOptions& options) {
  return record_examples(read_records_table(path), options);
}

ExampleSet record_examples(const RecordsTable& table, const RecordsOptions& options) {
  if (!options.order_by.empty() && options.group_by.empty())
    throw UsageError("data", "--order-by " + options.order_by + " without --group-by",
                     "order_by orders the rows inside each group: give --group-by COLUMN");
  const std::string& path = table.path;
  const std::vector<std::string>& header = table.header;
  const auto& rows = table.rows;
  const bool grouped = !options.group_by.empty();
  const std::size_t group_column =
      grouped ? column_index(header, options.group_by, "--group-by", path) : 0;
  const std::size_t order_column =
      options.order_by.empty() ? 0 : column_index(header, options.order_by, "--order-by", path);

  const std::vector<Column> columns = infer_columns(table);
  ExampleSet set;
  DatasetPreparation& preparation = set.preparation;
  preparation.format = "records";
  preparation.prompt_template = !options.prompt_template.empty() ? options.prompt_template
                                : grouped                        ? kGroupedRecordsTemplate
                                                                 : kRecordsTemplate;
  preparation.group_by = options.group_by;
  preparation.order_by = options.order_by;
  preparation.records_schema = schema_json(columns);
  const std::string prompt = render_prompt_template(preparation.prompt_template, header, options);

  if (!grouped) {
    for (const auto& r : rows) set.examples.push_back({prompt, csv_row_to_json(header, r)});
    return set;
  }
  std::vector<std::string> keys;  // in order of first appearance
  std::map<std::string, std::vector<const std::vector<std::string>*>> groups;
  for (const auto& r : rows) {
    auto& members = groups[r[group_column]];
    if (members.empty()) keys.push_back(r[group_column]);
    members.push_back(&r);
  }
  const bool numeric = columns[order_column].number && columns[order_column].any_value;
  for (const auto& key : keys) {
    auto& members = groups[key];
    if (!options.order_by.empty()) order_rows(members, order_column, numeric);
    std::string completion;
    for (const auto* member : members)
      completion += (completion.empty() ? "" : "\n") + csv_row_to_json(header, *member);
    set.examples.push_back({prompt, completion});
  }
  return set;
}

}  // namespace nss::data
