// False positives on real tables that hold no personal data: the CSV
// datasets Debian's python3-statsmodels ships (economic series, survey
// answers, indicators by country; no names, addresses or identifiers of
// people). Every column is classified with every entity as a candidate and
// the cells of unassigned columns scanned; an assigned column counts each
// of its non-missing cells as a false positive, a scanner span counts one.
// Printed per table and per entity as false positives per million
// non-missing cells; over all tables together each entity stays under 100.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/missing_cell.h"
#include "pii/cell_scanner.h"
#include "pii/column_classifier.h"
#include "pii/header_hints.h"

namespace nss::pii {
namespace {

/// Where Debian's python3-statsmodels installs its datasets.
constexpr const char* kStatsmodelsDatasets = "/usr/lib/python3/dist-packages/statsmodels/datasets";

// The comma-separated tables without people's personal data: not the ones
// that name US states, Scottish council areas or Chinese cities, which are
// places the entities cover, and not the few that are not comma-separated.
const std::vector<std::string> kTables = {
    "fertility/fertility.csv", "co2/co2.csv",           "randhie/randhie.csv",
    "fair/fair.csv",           "fair/fair_pt.csv",      "macrodata/macrodata.csv",
    "star98/star98.csv",       "grunfeld/grunfeld.csv", "elnino/elnino.csv",
    "committee/committee.csv", "copper/copper.csv",     "ccard/ccard.csv",
    "cancer/cancer.csv",       "danish_data/data.csv",  "elec_equip/elec_equip.csv",
    "engel/engel.csv",         "heart/heart.csv",       "interest_inflation/E6.csv",
    "longley/longley.csv",     "nile/nile.csv",         "stackloss/stackloss.csv",
    "strikes/strikes.csv",     "sunspots/sunspots.csv",
};

constexpr double kGoalPerMillion = 100;

struct Table {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> columns;  // columns[c][r]
};

// One RFC 4180 record: quoted fields ("" inside quotes), LF or CRLF ends;
// false at the end of the input. nss_data's reader would bring HDF5 and the
// tokenizers into this test.
bool read_record(std::istream& in, std::vector<std::string>& fields) {
  fields.assign(1, "");
  bool quoted = false, any = false;
  for (int ch; (ch = in.get()) != EOF;) {
    any = true;
    if (quoted) {
      if (ch != '"')
        fields.back() += static_cast<char>(ch);
      else if (in.peek() == '"')
        fields.back() += static_cast<char>(in.get());
      else
        quoted = false;
    } else if (ch == '"') {
      quoted = true;
    } else if (ch == ',') {
      fields.emplace_back();
    } else if (ch == '\n') {
      return true;
    } else if (ch != '\r') {
      fields.back() += static_cast<char>(ch);
    }
  }
  return any;
}

Table read_table(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  Table table;
  if (!read_record(in, table.header)) ADD_FAILURE() << path << ": empty";
  const std::string bom = "\xEF\xBB\xBF";  // danish_data's header starts with one
  if (table.header[0].compare(0, bom.size(), bom) == 0) table.header[0].erase(0, bom.size());
  table.columns.resize(table.header.size());
  for (std::vector<std::string> row; read_record(in, row);) {
    if (row.size() == 1 && row[0].empty()) continue;
    EXPECT_EQ(row.size(), table.header.size()) << path << ": ragged row";
    row.resize(table.header.size());
    for (std::size_t c = 0; c < row.size(); ++c) table.columns[c].push_back(std::move(row[c]));
  }
  return table;
}

struct Tally {
  std::size_t rows = 0, cells = 0;  // cells: the non-missing ones
  std::map<Entity, std::size_t> false_positives;
};

void print_example(const std::string& header, Entity entity, const std::string& text) {
  std::printf("  %s: %s '%s'\n", header.c_str(), std::string(entity_name(entity)).c_str(),
              text.c_str());
}

// The detections in one column, every one false on these tables.
void count_column(const std::string& header, const std::vector<std::string>& cells,
                  const ClassifierOptions& options, const ValueRules& rules, Tally& tally) {
  const std::vector<std::string_view> views(cells.begin(), cells.end());
  const ColumnAssignment a = classify_column(header, views, options, rules);
  const CellScanner scanner(options.entities, tokenize_header(header));
  std::size_t printed = 0;
  for (const std::string& cell : cells) {
    if (is_missing_cell(cell)) continue;
    ++tally.cells;
    if (a.entity) {
      ++tally.false_positives[*a.entity];
      if (printed++ < 3) print_example(header, *a.entity, cell);
      continue;
    }
    for (const Span& s : scanner.scan(cell)) {
      ++tally.false_positives[s.entity];
      if (printed++ < 3) print_example(header, s.entity, cell.substr(s.begin, s.end - s.begin));
    }
  }
}

double per_million(std::size_t count, std::size_t cells) {
  return cells ? 1e6 * static_cast<double>(count) / static_cast<double>(cells) : 0.0;
}

void print_tally(const std::string& title, const Tally& tally) {
  std::printf("%s: %zu rows, %zu non-missing cells", title.c_str(), tally.rows, tally.cells);
  if (tally.false_positives.empty()) std::printf(", no false positives");
  for (const auto& [entity, count] : tally.false_positives)
    std::printf(", %s %zu (%.1f per million)", std::string(entity_name(entity)).c_str(), count,
                per_million(count, tally.cells));
  std::printf("\n");
}

TEST(FalsePositives, PerEntityUnder100PerMillionCellsOnStatsmodelsDatasets) {
  if (!std::filesystem::is_directory(kStatsmodelsDatasets))
    GTEST_SKIP() << "python3-statsmodels is not installed (" << kStatsmodelsDatasets << ")";
  if (!std::filesystem::exists(faker_dir() + "/providers/person/en_US/__init__.py"))
    GTEST_SKIP() << "python3-fake-factory is not installed (" << faker_dir() << ")";
  const ValueRules rules(load_word_lists(faker_dir()));
  ClassifierOptions options;
  options.entities = all_entities();
  Tally total;
  for (const std::string& name : kTables) {
    const std::string path = std::string(kStatsmodelsDatasets) + "/" + name;
    ASSERT_TRUE(std::filesystem::exists(path)) << path;
    const Table table = read_table(path);
    Tally tally;
    tally.rows = table.columns.empty() ? 0 : table.columns[0].size();
    for (std::size_t c = 0; c < table.header.size(); ++c)
      count_column(table.header[c], table.columns[c], options, rules, tally);
    print_tally(name + " (" + std::to_string(table.header.size()) + " columns)", tally);
    total.rows += tally.rows;
    total.cells += tally.cells;
    for (const auto& [entity, count] : tally.false_positives)
      total.false_positives[entity] += count;
  }
  print_tally("all " + std::to_string(kTables.size()) + " tables", total);
  EXPECT_GE(total.cells, 250000u) << "too few cells to measure 100 per million";
  for (const Entity e : all_entities())
    EXPECT_LT(per_million(total.false_positives[e], total.cells), kGoalPerMillion)
        << entity_name(e) << ": " << total.false_positives[e] << " in " << total.cells;
}

}  // namespace
}  // namespace nss::pii
