#include "generate/record_validator.h"

#include <algorithm>
#include <set>

#include "core/error.h"
#include "data/csv_records.h"

namespace nss::generate {
namespace {

using nlohmann::ordered_json;

// Why `value` does not fit `column`, or "" when it does.
std::string cell_problem(const RecordSchema::Column& column, const ordered_json& value) {
  const std::string where = "column " + column.name + ": ";
  if (value.is_string()) {
    const std::string& text = value.get_ref<const std::string&>();
    if (text.empty())
      return column.empty_cells ? "" : where + "empty, but the table had no empty cell there";
    if (column.number) return where + value.dump() + " is not a number";
    if (column.digit_strings && !data::is_ascii_digits(text) &&
        std::find(column.missing_values.begin(), column.missing_values.end(), text) ==
            column.missing_values.end())
      return where + value.dump() +
             " is neither a string of digits nor a missing value the table held there";
    return "";
  }
  // A string column held number literals too: csv rows keep those as numbers.
  if (value.is_number()) return "";
  return where + value.dump() + " is " + value.type_name() + ", not a " +
         (column.number ? "number" : "string or number");
}

std::string record_problem(const RecordSchema& schema, const ordered_json& record) {
  if (!record.is_object()) return "not a JSON object";
  std::set<std::string> known;
  for (const auto& column : schema.columns) {
    known.insert(column.name);
    const auto it = record.find(column.name);
    if (it == record.end()) return "column " + column.name + " is missing";
    const std::string problem = cell_problem(column, *it);
    if (!problem.empty()) return problem;
  }
  for (const auto& [key, value] : record.items()) {
    (void)value;
    if (!known.count(key)) return "column " + key + " is not in the table";
  }
  return "";
}

// The bounds preparation recorded (all four, or none: older data).
void read_limits(const nlohmann::json& c, RecordSchema::Column& column) {
  if (!c.contains("max_chars")) return;
  auto bound = [&](const char* key) {
    const auto value = c.at(key).get<std::int64_t>();
    if (value < 0 || value > (1 << 24))
      throw DataError("generate", std::string("records_schema: ") + key + " " +
                                      std::to_string(value) + " is out of range");
    return static_cast<std::int32_t>(value);
  };
  column.limits = {bound("max_chars"), bound("max_integer_digits"), bound("max_fraction_digits"),
                   bound("max_exponent_digits")};
  column.limits_recorded = true;
}

}  // namespace

RecordSchema RecordSchema::from_json(const std::string& text) {
  RecordSchema schema;
  try {
    const auto doc = nlohmann::json::parse(text);
    for (const auto& c : doc.at("columns")) {
      const std::string type = c.at("type").get<std::string>();
      if (type != "number" && type != "string")
        throw DataError("generate", "records_schema: column type '" + type + "' is unknown");
      RecordSchema::Column column{c.at("name").get<std::string>(), type == "number",
                                  c.at("empty_cells").get<bool>()};
      read_limits(c, column);
      column.digit_strings = c.value("digit_strings", false);
      if (c.contains("missing_values"))
        column.missing_values = c.at("missing_values").get<std::vector<std::string>>();
      if (c.contains("categories"))
        column.categories = c.at("categories").get<std::vector<std::string>>();
      schema.columns.push_back(std::move(column));
    }
  } catch (const nlohmann::json::exception& e) {
    throw DataError("generate",
                    std::string("records_schema is not the schema nss_prepare_data "
                                "writes: ") +
                        e.what(),
                    "prepare the training data again with nss_prepare_data --format records");
  }
  if (schema.columns.empty())
    throw DataError("generate", "records_schema lists no column",
                    "prepare the training data again with nss_prepare_data --format records");
  return schema;
}

std::vector<CheckedRecord> check_completion(const RecordSchema& schema,
                                            std::string_view completion) {
  std::vector<CheckedRecord> checked;
  std::size_t start = 0;
  while (start <= completion.size()) {
    std::size_t end = completion.find('\n', start);
    if (end == std::string_view::npos) end = completion.size();
    std::string line(completion.substr(start, end - start));
    if (!line.empty() && line.back() == '\r') line.pop_back();
    start = end + 1;
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    CheckedRecord result;
    result.line = line;
    try {
      result.record = ordered_json::parse(line);
      result.reason = record_problem(schema, result.record);
    } catch (const nlohmann::json::parse_error&) {
      result.reason = "not valid JSON";
    } catch (const nlohmann::json::out_of_range&) {
      // 1E797: valid JSON, but no double holds it.
      result.record = nullptr;
      result.reason = "a number too large for a double";
    }
    result.valid = result.reason.empty();
    checked.push_back(std::move(result));
  }
  return checked;
}

std::string csv_header(const RecordSchema& schema) {
  std::string line;
  for (const auto& column : schema.columns)
    line += (line.empty() ? "" : ",") + data::csv_cell(column.name);
  return line + "\n";
}

std::string csv_line(const RecordSchema& schema, const ordered_json& record) {
  std::string line;
  bool first = true;
  for (const auto& column : schema.columns) {
    const ordered_json& value = record.at(column.name);
    line += (first ? "" : ",") +
            data::csv_cell(value.is_string() ? value.get<std::string>() : value.dump());
    first = false;
  }
  return line + "\n";
}

}  // namespace nss::generate
