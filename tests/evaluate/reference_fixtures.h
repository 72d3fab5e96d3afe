// NeMo Safe Synthesizer 0.1.16's own scores on the scikit-learn tables and
// the generated mixed and free-text tables (tests/fixtures/evaluation,
// scripts/make_evaluation_fixtures.sh), for the tests that compare
// nss_evaluate with them.
#pragma once

#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "evaluate/evaluation_tables.h"
#include "support/test_paths.h"

namespace nss::evaluate::reference {

inline const char* const kTables[] = {"iris", "wine", "breast_cancer", "diabetes", "mixed", "text"};
inline const char* const kVariants[] = {"independent", "memorised", "shuffled"};

inline std::string fixture(const std::string& table, const std::string& variant) {
  return nss::testing::source_dir() + "/tests/fixtures/evaluation/" + table + "/" + variant;
}

inline nlohmann::json scores(const std::string& dir) {
  std::ifstream in(dir + "/scores.json");
  return nlohmann::json::parse(in);
}

// `table` with its columns in `order` (the reference's: a Python set's).
inline Table reordered(const Table& table, const nlohmann::json& order) {
  Table out = table;
  out.columns.clear();
  for (const auto& name : order) out.columns.push_back(table.columns[table.index_of(name)]);
  return out;
}

// The evaluation tables of a fixture directory, in the reference's column order.
inline EvaluationTables tables_of(const std::string& dir, const nlohmann::json& order) {
  return make_evaluation_tables(reordered(read_table(dir + "/train.csv", "--train"), order),
                                reordered(read_table(dir + "/synthetic.csv", "--synthetic"), order),
                                reordered(read_table(dir + "/holdout.csv", "--holdout"), order));
}

}  // namespace nss::evaluate::reference
