// PII detection's speed (scripts/bench/pii_speed.sh): the labelled mixed
// table (tests/pii/labelled_table.h) at ROWS rows per column, every column
// classified, then every cell of the columns without an entity scanned, as
// a table's detection runs, on one thread; REPEATS times. Prints each run's
// cells per second, detection as a whole and the scanner alone.
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "labelled_table.h"
#include "pii/cell_scanner.h"
#include "pii/column_classifier.h"
#include "pii/header_hints.h"

namespace {

using namespace nss::pii;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

void run_once(const std::vector<LabelledColumn>& table, const ValueRules& rules,
              const ClassifierOptions& options) {
  std::size_t cells = 0, scanned = 0, spans = 0;
  double scan_seconds = 0;
  const auto start = Clock::now();
  for (const LabelledColumn& column : table) {
    const std::vector<std::string_view> views(column.cells.begin(), column.cells.end());
    const ColumnAssignment assignment = classify_column(column.header, views, options, rules);
    cells += column.cells.size();
    if (assignment.entity) continue;
    const auto scan_start = Clock::now();
    const CellScanner scanner(options.entities, tokenize_header(column.header));
    for (const std::string& cell : column.cells) spans += scanner.scan(cell).size();
    scan_seconds += seconds_since(scan_start);
    scanned += column.cells.size();
  }
  const double seconds = seconds_since(start);
  std::printf(
      "detection %.0f cells/s (%zu cells, %zu columns, %.3f s); scanner %.0f cells/s "
      "(%zu cells, %zu spans)\n",
      cells / seconds, cells, table.size(), seconds, scanned / scan_seconds, scanned, spans);
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t rows = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 4000;
  const int repeats = argc > 2 ? std::atoi(argv[2]) : 5;
  const WordLists lists = load_word_lists(faker_dir());
  const ValueRules rules(lists);
  ClassifierOptions options;
  options.entities = all_entities();
  const std::vector<LabelledColumn> table = labelled_table(rows, lists);
  for (int r = 0; r < repeats; ++r) run_once(table, rules, options);
  return 0;
}
