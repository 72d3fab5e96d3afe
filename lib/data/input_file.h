// Opening and reading the preparation inputs: what every input format shares
// (regular-file check, UTF-8 byte-order mark, "file:line" in messages, one
// JSON value per JSONL line).
#pragma once

#include <cstdint>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

namespace nss::data {

/// Opens `path` for binary reading; DataError when it is missing, not a
/// regular file or unreadable, its hint naming `flag`, the option that gave it.
std::ifstream open_input(const std::string& path, const char* flag = "--input");

/// DataError when a read of `path` failed (not at the end of the file).
void check_read(const std::ifstream& in, const std::string& path);

/// Skips a UTF-8 byte-order mark at the start of `in`.
void skip_bom(std::istream& in);

/// "path:line", for messages.
std::string where(const std::string& path, std::int64_t line);

/// One JSONL line as JSON, keys in file order; DataError "path:line:
/// invalid JSON: ..." otherwise.
nlohmann::ordered_json parse_jsonl_line(const std::string& line, const std::string& path,
                                        std::int64_t number);

/// Calls `visit(record, line_number)` for each non-blank line of the JSONL
/// file `path` and returns how many there were (CRLF and a BOM are accepted).
template <class Visit>
std::int64_t for_each_jsonl_record(const std::string& path, Visit visit,
                                   const char* flag = "--input") {
  std::ifstream in = open_input(path, flag);
  skip_bom(in);
  std::string line;
  std::int64_t number = 0;
  std::int64_t records = 0;
  while (std::getline(in, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    visit(parse_jsonl_line(line, path, number), number);
    ++records;
  }
  check_read(in, path);
  return records;
}

}  // namespace nss::data
