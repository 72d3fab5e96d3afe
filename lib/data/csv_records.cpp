#include "data/csv_records.h"

#include <cstdio>

#include "core/error.h"

namespace nss::data {
namespace {

std::string where(const std::string& path, std::int64_t line) {
  return path + ":" + std::to_string(line);
}

}  // namespace

std::vector<std::string> read_csv_header(CsvReader& reader, const std::string& path) {
  std::vector<std::string> header;
  if (!reader.next(header))
    throw DataError("data", "input " + path + " is empty (no CSV header)",
                    "remove it from the --input list");
  for (std::size_t i = 0; i < header.size(); ++i) {
    // A record is a JSON object keyed by the column names: "" is no key.
    if (header[i].find_first_not_of(" \t") == std::string::npos)
      throw DataError("data",
                      where(path, reader.record_line()) + ": the CSV header's column " +
                          std::to_string(i + 1) + " has no name",
                      "name every column: a record's fields are keyed by the column names");
    for (std::size_t j = 0; j < i; ++j)
      if (header[i] == header[j])
        throw DataError("data",
                        where(path, reader.record_line()) + ": the CSV header names column '" +
                            header[i] + "' twice",
                        "give every column a distinct name");
  }
  return header;
}

bool next_csv_row(CsvReader& reader, const std::vector<std::string>& header,
                  std::vector<std::string>& row, const std::string& path) {
  if (!reader.next(row)) return false;
  if (row.size() != header.size())
    throw DataError("data",
                    where(path, reader.record_line()) + ": CSV row has " +
                        std::to_string(row.size()) + " fields, the header has " +
                        std::to_string(header.size()),
                    "fix the row (quote fields that contain commas or newlines)");
  return true;
}

CsvReader::CsvReader(std::istream& in, std::string path) : in_(in), path_(std::move(path)) {}

int CsvReader::get() {
  const int c = in_.get();
  if (c == '\n') ++line_;
  return c;
}

int CsvReader::get_in_record() {
  const int c = get();
  if (c == 0)
    throw DataError("data", where(path_, line_) + ": a NUL byte: binary data, not CSV text",
                    "give the table as CSV text (UTF-8), or drop the file from --input");
  if (++record_bytes_ > kMaxCsvRecordBytes)
    throw DataError("data",
                    where(path_, record_line_) + ": a CSV record longer than " +
                        std::to_string(kMaxCsvRecordBytes >> 20) +
                        " MiB: not a table row (a binary file, or a quote never closed?)",
                    "check the file; a row must fit the longest sequence a run trains on");
  return c;
}

bool CsvReader::next(std::vector<std::string>& fields) {
  for (;;) {
    fields.assign(1, std::string());
    record_line_ = line_;
    record_bytes_ = 0;
    int c = get_in_record();
    if (c == EOF) return false;
    bool any_text = false;
    bool after_quotes = false;  // a quoted field has just closed
    for (;; c = get_in_record()) {
      if (c == EOF || c == '\n') break;
      if (c == '\r' && in_.peek() == '\n') continue;
      std::string& field = fields.back();
      if (c == ',') {
        fields.emplace_back();
        after_quotes = false;
        any_text = true;
        continue;
      }
      if (after_quotes)
        throw DataError(
            "data",
            path_ + ":" + std::to_string(line_) + ": text after the closing quote of a field",
            "quote the whole field and write a quote inside it as \"\"");
      any_text = true;
      if (c == '"' && field.empty()) {
        const std::int64_t opened = line_;
        for (;;) {
          c = get_in_record();
          if (c == EOF)
            throw DataError(
                "data", path_ + ":" + std::to_string(opened) + ": a quoted field is never closed",
                "close the quote, or write a quote inside a field as \"\"");
          if (c == '"') {
            if (in_.peek() != '"') break;
            get_in_record();
          }
          field.push_back(static_cast<char>(c));
        }
        after_quotes = true;
        continue;
      }
      field.push_back(static_cast<char>(c));
    }
    if (any_text) return true;
    if (c == EOF) return false;
  }
}

bool is_ascii_digits(const std::string& text) {
  return text.find_first_not_of("0123456789") == std::string::npos;
}

bool is_json_number(const std::string& text) {
  std::size_t i = 0;
  const std::size_t n = text.size();
  const auto digits = [&] {
    const std::size_t start = i;
    while (i < n && text[i] >= '0' && text[i] <= '9') ++i;
    return i - start;
  };
  if (i < n && text[i] == '-') ++i;
  if (i < n && text[i] == '0') {
    ++i;
  } else if (i >= n || text[i] < '1' || text[i] > '9' || digits() == 0) {
    return false;
  }
  if (i < n && text[i] == '.') {
    ++i;
    if (digits() == 0) return false;
  }
  if (i < n && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    if (i < n && (text[i] == '+' || text[i] == '-')) ++i;
    if (digits() == 0) return false;
  }
  return i == n;
}

std::string csv_cell(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (const char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

std::string csv_line(const std::vector<std::string>& fields) {
  std::string line;
  for (std::size_t i = 0; i < fields.size(); ++i) line += (i ? "," : "") + csv_cell(fields[i]);
  return line + "\n";
}

void append_json_string(const std::string& text, std::string& out) {
  out.push_back('"');
  for (const char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char escaped[8];
          std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned char>(c));
          out += escaped;
        } else {
          out.push_back(c);
        }
    }
  }
  out.push_back('"');
}

std::string csv_row_to_json(const std::vector<std::string>& header,
                            const std::vector<std::string>& row) {
  std::string json = "{";
  for (std::size_t i = 0; i < header.size(); ++i) {
    if (i) json.push_back(',');
    append_json_string(header[i], json);
    json.push_back(':');
    if (is_json_number(row[i]))
      json += row[i];
    else
      append_json_string(row[i], json);
  }
  json.push_back('}');
  return json;
}

}  // namespace nss::data
