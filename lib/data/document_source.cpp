#include "data/document_source.h"

#include <cctype>
#include <cerrno>
#include <fstream>
#include <iterator>
#include <sys/stat.h>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/fs.h"
#include "data/csv_records.h"

namespace nss::data {
namespace {

const char* const kUtf8Bom = "\xEF\xBB\xBF";

std::ifstream open_input(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) {
    const int err = errno;
    throw DataError("data", "cannot read input " + path + ": " + errno_text(err),
                    "check the --input path");
  }
  if (!S_ISREG(info.st_mode))
    throw DataError("data", "input " + path + " is not a regular file",
                    "pass files with --input (one per text document, or JSONL/CSV files)");
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int err = errno;
    throw DataError("data", "cannot read input " + path + ": " + errno_text(err),
                    "check the file's permissions");
  }
  return in;
}

void check_read(const std::ifstream& in, const std::string& path) {
  if (in.bad()) throw DataError("data", "error while reading input " + path);
}

void skip_bom(std::istream& in) {
  char head[3] = {};
  in.read(head, 3);
  if (in.gcount() == 3 && std::string(head, 3) == kUtf8Bom) return;
  in.clear();
  in.seekg(0);
}

std::string where(const std::string& path, std::int64_t line) {
  return path + ":" + std::to_string(line);
}

std::int64_t text_documents(const std::string& path,
                            const std::function<void(std::string_view)>& visit) {
  std::ifstream in = open_input(path);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  check_read(in, path);
  if (text.empty())
    throw DataError("data", "input " + path + " is empty", "remove it from the --input list");
  visit(text);
  return 1;
}

std::int64_t jsonl_documents(const std::string& path,
                             const std::function<void(std::string_view)>& visit) {
  std::ifstream in = open_input(path);
  skip_bom(in);
  std::string line;
  std::int64_t number = 0;
  std::int64_t records = 0;
  while (std::getline(in, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    nlohmann::ordered_json record;
    try {
      record = nlohmann::ordered_json::parse(line);
    } catch (const nlohmann::json::parse_error& e) {
      std::string reason = e.what();
      const auto bracket = reason.find("] ");
      if (bracket != std::string::npos) reason.erase(0, bracket + 2);
      throw DataError("data", where(path, number) + ": invalid JSON: " + reason,
                      "each line of a JSONL file must be one JSON record in UTF-8");
    }
    const auto text = record.is_object() ? record.find("text") : record.end();
    if (record.is_object() && text != record.end() && text->is_string())
      visit(text->get_ref<const std::string&>());
    else
      visit(record.dump());
    ++records;
  }
  check_read(in, path);
  if (records == 0)
    throw DataError("data", "input " + path + " holds no JSONL records",
                    "remove it from the --input list");
  return records;
}

std::int64_t csv_documents(const std::string& path,
                           const std::function<void(std::string_view)>& visit) {
  std::ifstream in = open_input(path);
  skip_bom(in);
  CsvReader reader(in, path);
  std::vector<std::string> header;
  if (!reader.next(header))
    throw DataError("data", "input " + path + " is empty (no CSV header)",
                    "remove it from the --input list");
  for (std::size_t i = 0; i < header.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (header[i] == header[j])
        throw DataError("data",
                        where(path, reader.record_line()) + ": the CSV header names column '" +
                            header[i] + "' twice",
                        "give every column a distinct name");
  std::vector<std::string> row;
  std::int64_t rows = 0;
  while (reader.next(row)) {
    if (row.size() != header.size())
      throw DataError("data",
                      where(path, reader.record_line()) + ": CSV row has " +
                          std::to_string(row.size()) + " fields, the header has " +
                          std::to_string(header.size()),
                      "fix the row (quote fields that contain commas or newlines)");
    visit(csv_row_to_json(header, row));
    ++rows;
  }
  check_read(in, path);
  if (rows == 0)
    throw DataError("data", "input " + path + " has a CSV header but no rows",
                    "remove it from the --input list");
  return rows;
}

}  // namespace

const char* input_format_name(InputFormat format) {
  switch (format) {
    case InputFormat::kText:
      return "text";
    case InputFormat::kJsonl:
      return "jsonl";
    case InputFormat::kCsv:
      return "csv";
  }
  return "unknown";
}

InputFormat parse_input_format(const std::string& name) {
  if (name == "text") return InputFormat::kText;
  if (name == "jsonl") return InputFormat::kJsonl;
  if (name == "csv") return InputFormat::kCsv;
  throw UsageError("data", "unknown input format '" + name + "'", "use text, jsonl or csv");
}

InputFormat input_format_for(const std::string& path) {
  const auto ends_with = [&](const std::string& suffix) {
    if (path.size() < suffix.size()) return false;
    std::string tail = path.substr(path.size() - suffix.size());
    for (char& c : tail) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return tail == suffix;
  };
  if (ends_with(".jsonl") || ends_with(".ndjson")) return InputFormat::kJsonl;
  if (ends_with(".csv")) return InputFormat::kCsv;
  if (ends_with(".json"))
    throw UsageError("data", "cannot tell how to read " + path + " (a .json file)",
                     "convert it to JSONL (one record per line), or pass --format text");
  return InputFormat::kText;
}

std::int64_t for_each_document(const std::string& path, InputFormat format,
                               const std::function<void(std::string_view)>& visit) {
  switch (format) {
    case InputFormat::kText:
      return text_documents(path, visit);
    case InputFormat::kJsonl:
      return jsonl_documents(path, visit);
    case InputFormat::kCsv:
      return csv_documents(path, visit);
  }
  throw InternalError("data", "unknown input format");
}

}  // namespace nss::data
