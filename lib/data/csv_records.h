// CSV input for nss_prepare_data: an RFC 4180 reader and the serialisation
// of a row as one JSON object keyed by the header, the way tabular data is
// given to a language model for synthetic-data fine-tuning (NSS style).
#pragma once

#include <cstdint>
#include <istream>
#include <string>
#include <vector>

namespace nss::data {

/// A record longer than this is not a table row (it would not fit the
/// longest sequence a run trains on, 2^20 tokens of about 4 bytes): a binary
/// file, or a quote never closed.
inline constexpr std::int64_t kMaxCsvRecordBytes = std::int64_t{16} << 20;

class CsvReader {
 public:
  /// Reads `in`; `path` names the file in errors.
  CsvReader(std::istream& in, std::string path);

  /// The next record into `fields`; false at the end. Fields are separated by
  /// ',', may be quoted with '"' ("" is a quote inside quotes, newlines may be
  /// quoted), records end at LF or CRLF; blank lines are skipped. Throws
  /// DataError "file:line: ..." for an unterminated quote or text after one.
  bool next(std::vector<std::string>& fields);

  /// 1-based line on which the last record returned starts.
  std::int64_t record_line() const { return record_line_; }

 private:
  int get();
  // The next byte of the record, checked against NUL and the record limit.
  int get_in_record();

  std::istream& in_;
  std::string path_;
  std::int64_t line_ = 1;
  std::int64_t record_line_ = 0;
  std::int64_t record_bytes_ = 0;
};

/// The header of the CSV `reader` reads from `path`; DataError when the file
/// is empty or a column is named twice.
std::vector<std::string> read_csv_header(CsvReader& reader, const std::string& path);

/// The next row into `row`; false at the end. DataError "file:line: CSV row
/// has N fields, the header has M" for a ragged row.
bool next_csv_row(CsvReader& reader, const std::vector<std::string>& header,
                  std::vector<std::string>& row, const std::string& path);

/// `text` as one CSV field: quoted (quotes doubled) when it holds a comma,
/// a quote or a line break, else unchanged.
std::string csv_cell(const std::string& text);

/// `fields` as one CSV record ending in "\n".
std::string csv_line(const std::vector<std::string>& fields);

/// True when `text` is exactly a JSON number literal ("12", "-0.5", "1e9";
/// not "007", "+1", "NaN" or " 1").
bool is_json_number(const std::string& text);

/// True when `text` is ASCII digits alone ("06647"; "" too): a records
/// schema's digit string.
bool is_ascii_digits(const std::string& text);

/// Appends `text` as a JSON string literal: quotes, backslashes and control
/// characters escaped; every other byte, valid UTF-8 or not, unchanged.
void append_json_string(const std::string& text, std::string& out);

/// One row as a compact JSON object in header order, {"name":"Ada","age":36}:
/// a cell that is a JSON number literal stays a number (its text unchanged),
/// any other cell is a string.
std::string csv_row_to_json(const std::vector<std::string>& header,
                            const std::vector<std::string>& row);

}  // namespace nss::data
