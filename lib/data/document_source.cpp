#include "data/document_source.h"

#include <cctype>
#include <iterator>
#include <vector>

#include "core/error.h"
#include "data/csv_records.h"
#include "data/input_file.h"

namespace nss::data {
namespace {

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
  const std::int64_t records =
      for_each_jsonl_record(path, [&](const nlohmann::ordered_json& record, std::int64_t) {
        const auto text = record.is_object() ? record.find("text") : record.end();
        if (record.is_object() && text != record.end() && text->is_string())
          visit(text->get_ref<const std::string&>());
        else
          visit(record.dump());
      });
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
  const std::vector<std::string> header = read_csv_header(reader, path);
  std::vector<std::string> row;
  std::int64_t rows = 0;
  while (next_csv_row(reader, header, row, path)) {
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
    case InputFormat::kSft:
      return "sft";
    case InputFormat::kRecords:
      return "records";
    case InputFormat::kChat:
      return "chat";
  }
  return "unknown";
}

bool is_example_format(InputFormat format) {
  return format == InputFormat::kSft || format == InputFormat::kRecords ||
         format == InputFormat::kChat;
}

InputFormat parse_input_format(const std::string& name) {
  if (name == "text") return InputFormat::kText;
  if (name == "jsonl") return InputFormat::kJsonl;
  if (name == "csv") return InputFormat::kCsv;
  if (name == "sft") return InputFormat::kSft;
  if (name == "records") return InputFormat::kRecords;
  if (name == "chat") return InputFormat::kChat;
  throw UsageError("data", "unknown input format '" + name + "'",
                   "use text, jsonl, csv, sft, records or chat");
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
    default:
      break;
  }
  throw InternalError("data", std::string(input_format_name(format)) + " inputs hold examples");
}

}  // namespace nss::data
