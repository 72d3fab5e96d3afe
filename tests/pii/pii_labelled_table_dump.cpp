// The labelled table for scripts/pii_reference.py, which runs NeMo Safe
// Synthesizer's regex detectors on the same cells, and what nss_hpc detects
// in them for nss_regex_parity_test.py, which compares both.
//
//   pii_labelled_table_dump dump ROWS
//       one JSON line per cell of labelled_table(ROWS), column by column:
//       {"column":..., "cell":..., "spans":[[begin,end,"entity"],...]}; an
//       entity column's non-missing cell is one span of its entity, a decoy
//       cell has none, a free-text cell has its labelled spans
//   pii_labelled_table_dump detect
//       reads lines "HEADER_HEX CELL_HEX" (hex keeps any byte on one line),
//       consecutive lines with one header being one column, and prints per
//       line nss_hpc's spans as [[begin,end,"entity"],...]: every entity is
//       a candidate; a column the classifier assigns has its non-missing
//       cells as whole spans, any other goes through the cell scanner with
//       the header's tokens as context (as pii/table_transform.cpp does)
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>

#include "core/missing_cell.h"
#include "labelled_table.h"
#include "pii/cell_scanner.h"
#include "pii/column_classifier.h"
#include "pii/header_hints.h"

namespace {

std::string json_string(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", u);
      out += escaped;
    } else {
      out += c;  // the table is ASCII; other bytes pass through
    }
  }
  return out + "\"";
}

bool unhex(const std::string& hex, std::string& out) {
  if (hex.size() % 2) return false;
  out.clear();
  for (std::size_t i = 0; i < hex.size(); i += 2) {
    char* end = nullptr;
    const std::string pair = hex.substr(i, 2);
    const long byte = std::strtol(pair.c_str(), &end, 16);
    if (end != pair.c_str() + 2) return false;
    out.push_back(static_cast<char>(byte));
  }
  return true;
}

std::string span_json(std::size_t begin, std::size_t end, nss::pii::Entity entity) {
  return "[" + std::to_string(begin) + "," + std::to_string(end) + "," +
         json_string(std::string(nss::pii::entity_name(entity))) + "]";
}

int dump(std::size_t rows) {
  using namespace nss::pii;
  const WordLists lists = load_word_lists(faker_dir());
  for (const LabelledColumn& column : labelled_table(rows, lists)) {
    for (std::size_t r = 0; r < column.cells.size(); ++r) {
      const std::string& cell = column.cells[r];
      std::vector<std::string> spans;
      if (column.entity && !nss::is_missing_cell(cell))
        spans.push_back(span_json(0, cell.size(), *column.entity));
      if (!column.spans.empty())
        for (const LabelledSpan& s : column.spans[r])
          spans.push_back(span_json(s.begin, s.end, s.entity));
      std::string line = "{\"column\":" + json_string(column.header) +
                         ",\"cell\":" + json_string(cell) + ",\"spans\":[";
      for (std::size_t i = 0; i < spans.size(); ++i) line += (i ? "," : "") + spans[i];
      std::cout << line << "]}\n";
    }
  }
  return 0;
}

void detect_column(const std::string& header, const std::vector<std::string>& cells,
                   const nss::pii::ValueRules& rules) {
  using namespace nss::pii;
  ClassifierOptions options;
  options.entities = all_entities();
  const std::vector<std::string_view> views(cells.begin(), cells.end());
  const ColumnAssignment assigned = classify_column(header, views, options, rules);
  const CellScanner scanner(options.entities, tokenize_header(header));
  for (const std::string& cell : cells) {
    std::vector<std::string> spans;
    if (assigned.entity && !nss::is_missing_cell(cell))
      spans.push_back(span_json(0, cell.size(), *assigned.entity));
    if (!assigned.entity)
      for (const Span& s : scanner.scan(cell)) spans.push_back(span_json(s.begin, s.end, s.entity));
    std::string line = "[";
    for (std::size_t i = 0; i < spans.size(); ++i) line += (i ? "," : "") + spans[i];
    std::cout << line << "]\n";
  }
}

int detect() {
  using namespace nss::pii;
  const WordLists lists = load_word_lists(faker_dir());
  const ValueRules rules(lists);
  std::string line, header, cell, column_header;
  std::vector<std::string> column;
  while (std::getline(std::cin, line)) {
    const std::size_t space = line.find(' ');
    if (space == std::string::npos || !unhex(line.substr(0, space), header) ||
        !unhex(line.substr(space + 1), cell)) {
      std::cerr << "detect: expected \"HEADER_HEX CELL_HEX\", got: " << line << "\n";
      return 2;
    }
    if (!column.empty() && header != column_header) {
      detect_column(column_header, column, rules);
      column.clear();
    }
    column_header = header;
    column.push_back(cell);
  }
  if (!column.empty()) detect_column(column_header, column, rules);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "dump" && argc == 3) return dump(std::strtoull(argv[2], nullptr, 10));
  if (mode == "detect" && argc == 2) return detect();
  std::cerr << "usage: pii_labelled_table_dump dump ROWS | pii_labelled_table_dump detect\n";
  return 2;
}
