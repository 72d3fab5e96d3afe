// Detection quality on a labelled table with decoys: every entity column
// gets its entity and every decoy column none; per entity, precision and
// recall over the labelled cells and free-text spans are at least 0.95
// (printed), over the cells of the columns and, apart, over the spans in
// free text. Names, streets and places inside free text are not detected
// yet, so the free-text column labels only the structured entities. And the
// detection throughput on the same mixed table, printed.
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <tuple>

#include <gtest/gtest.h>

#include "core/missing_cell.h"
#include "labelled_table.h"
#include "pii/cell_scanner.h"
#include "pii/column_classifier.h"
#include "pii/header_hints.h"

namespace nss::pii {
namespace {

struct Counts {
  std::size_t tp = 0, fp = 0, fn = 0;
};

using Key = std::tuple<std::size_t, std::size_t, Entity>;  // begin, end, entity

void report(const char* what, const LabelledColumn& column, const Key& k, const std::string& cell) {
  std::printf("%s: %s %s '%s' in '%s'\n", column.header.c_str(), what,
              std::string(entity_name(std::get<2>(k))).c_str(),
              cell.substr(std::get<0>(k), std::get<1>(k) - std::get<0>(k)).c_str(), cell.c_str());
}

// Cells of an entity column are labelled with its entity; free-text spans
// with theirs; a prediction is right when it names the same cell (or the
// same byte span) and entity.
void count_column(const LabelledColumn& column, const std::optional<Entity>& assigned,
                  const CellScanner& scanner, std::map<Entity, Counts>& counts) {
  for (std::size_t r = 0; r < column.cells.size(); ++r) {
    const std::string& cell = column.cells[r];
    std::set<Key> truth, found;
    if (column.entity && !is_missing_cell(cell)) truth.insert({0, cell.size(), *column.entity});
    if (!column.spans.empty())
      for (const LabelledSpan& s : column.spans[r]) truth.insert({s.begin, s.end, s.entity});
    if (assigned && !is_missing_cell(cell)) found.insert({0, cell.size(), *assigned});
    if (!assigned)
      for (const Span& s : scanner.scan(cell)) found.insert({s.begin, s.end, s.entity});
    for (const Key& k : found) {
      Counts& c = counts[std::get<2>(k)];
      ++(truth.count(k) ? c.tp : c.fp);
      if (!truth.count(k)) report("false", column, k, cell);
    }
    for (const Key& k : truth)
      if (!found.count(k)) {
        ++counts[std::get<2>(k)].fn;
        report("missed", column, k, cell);
      }
  }
}

class DetectionQuality : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(faker_dir() + "/providers/person/en_US/__init__.py"))
      GTEST_SKIP() << "python3-fake-factory is not installed (" << faker_dir() << ")";
    lists = load_word_lists(faker_dir());
    rules.emplace(lists);
    options.entities = all_entities();
  }
  WordLists lists;
  std::optional<ValueRules> rules;
  ClassifierOptions options;
};

std::vector<std::string_view> views(const LabelledColumn& column) {
  return {column.cells.begin(), column.cells.end()};
}

void print_and_check(const char* title, std::map<Entity, Counts>& counts) {
  std::printf("%s\n%-18s %6s %5s %5s %9s %7s\n", title, "entity", "tp", "fp", "fn", "precision",
              "recall");
  for (const Entity e : all_entities()) {
    const Counts& c = counts[e];
    if (c.tp + c.fn + c.fp == 0) continue;
    const double precision = c.tp + c.fp ? static_cast<double>(c.tp) / (c.tp + c.fp) : 1.0;
    const double recall = c.tp + c.fn ? static_cast<double>(c.tp) / (c.tp + c.fn) : 1.0;
    std::printf("%-18s %6zu %5zu %5zu %9.4f %7.4f\n", std::string(entity_name(e)).c_str(), c.tp,
                c.fp, c.fn, precision, recall);
    EXPECT_GE(c.tp + c.fn, 20u) << entity_name(e) << ": too few labelled values to measure";
    EXPECT_GE(precision, 0.95) << entity_name(e);
    EXPECT_GE(recall, 0.95) << entity_name(e);
  }
}

TEST_F(DetectionQuality, PrecisionAndRecallPerEntityAreAtLeast95Percent) {
  const std::vector<LabelledColumn> table = labelled_table(400, lists);
  std::map<Entity, Counts> in_columns, in_text;
  std::size_t cells = 0, spans = 0;
  for (const LabelledColumn& column : table) {
    const ColumnAssignment a = classify_column(column.header, views(column), options, *rules);
    EXPECT_EQ(a.entity, column.entity)
        << column.header << ": " << (a.entity ? entity_name(*a.entity) : "none") << " share "
        << a.evidence.share;
    const CellScanner scanner(options.entities, tokenize_header(column.header));
    count_column(column, a.entity, scanner, column.spans.empty() ? in_columns : in_text);
    cells += column.cells.size();
    for (const auto& cell_spans : column.spans) spans += cell_spans.size();
  }
  std::printf("%zu cells in %zu columns, %zu labelled spans in free text\n", cells, table.size(),
              spans);
  print_and_check(
      "cells of entity and decoy columns (column classification, then the scanner on "
      "unassigned columns):",
      in_columns);
  print_and_check("spans in free text (the cell scanner, exact entity and byte span):", in_text);
  const std::set<Entity> only_in_columns = {
      Entity::kFirstName, Entity::kLastName, Entity::kName,    Entity::kStreetAddress,
      Entity::kCity,      Entity::kState,    Entity::kAddress, Entity::kNationalId};
  for (const Entity e : all_entities()) {
    if (only_in_columns.count(e)) continue;
    EXPECT_GE(in_text[e].tp + in_text[e].fn, 20u) << entity_name(e) << " in free text";
  }
}

}  // namespace
}  // namespace nss::pii
