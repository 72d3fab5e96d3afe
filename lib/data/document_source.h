// The documents of nss_prepare_data's inputs: a text file is one document, a
// JSONL line one record (its "text" string when it has one, else the whole
// record as JSON), a CSV row one JSON object keyed by the header.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace nss::data {

/// Document formats (text, jsonl, csv) and example formats (sft, records,
/// chat: a prompt and its completion each, example_source.h).
enum class InputFormat { kText, kJsonl, kCsv, kSft, kRecords, kChat };

/// "text", "jsonl", "csv", "sft", "records" or "chat".
const char* input_format_name(InputFormat format);

/// Parses one of the names above; UsageError otherwise.
InputFormat parse_input_format(const std::string& name);

/// True for sft, records and chat.
bool is_example_format(InputFormat format);

/// The format an extension implies: .jsonl/.ndjson -> jsonl, .csv -> csv,
/// anything else -> text; a .json file is a UsageError (say --format).
InputFormat input_format_for(const std::string& path);

/// Calls `visit` with every document of `path` (a document format) and
/// returns how many there were. DataError (exit 4) for an unreadable or empty input, invalid JSON
/// or a ragged CSV row, naming file:line.
std::int64_t for_each_document(const std::string& path, InputFormat format,
                               const std::function<void(std::string_view)>& visit);

}  // namespace nss::data
