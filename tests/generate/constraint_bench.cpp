// scripts/bench/constraint_cost.sh's program: what --constrain schema costs
// with one tokenizer.json, for a table like the README's (product,
// category, price):
//
//   constraint_bench TOKENIZER_JSON RECORDS
//
// prints JSON: the vocabulary, the seconds to read each token's bytes and to
// build the automaton and its token trie, the resident memory they add, and
// over RECORDS records walked token by token (their tokenizer ids) the mask
// calls — all, the first visits of a state (a trie walk) and the cached ones
// — with their median and total seconds.
#include <algorithm>
#include <chrono>
#include <fstream>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/app_main.h"
#include "data/csv_records.h"
#include "generate/record_constraint.h"
#include "tokenizer/tokenizer.h"

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

long resident_kib() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  return 0;
}

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::nth_element(values.begin(), values.begin() + values.size() / 2, values.end());
  return values[values.size() / 2];
}

nss::generate::RecordSchema schema() {
  const char* json = R"({"columns":[
    {"name":"product","type":"string","empty_cells":false,"max_chars":24,"max_integer_digits":0,"max_fraction_digits":0,"max_exponent_digits":0},
    {"name":"category","type":"string","empty_cells":false,"max_chars":12,"max_integer_digits":0,"max_fraction_digits":0,"max_exponent_digits":0},
    {"name":"price","type":"number","empty_cells":false,"max_chars":0,"max_integer_digits":4,"max_fraction_digits":2,"max_exponent_digits":0}]})";
  return nss::generate::RecordSchema::from_json(json);
}

std::string record(std::mt19937& rng) {
  static const std::vector<std::string> kProducts = {"apple",        "desk lamp",   "oak table",
                                                     "café au lait", "garden hose", "USB-C cable",
                                                     "tea kettle"};
  static const std::vector<std::string> kCategories = {"food", "furniture", "garden",
                                                       "electronics"};
  return nss::data::csv_row_to_json(
      {"product", "category", "price"},
      {kProducts[rng() % kProducts.size()], kCategories[rng() % kCategories.size()],
       std::to_string(rng() % 500) + "." + std::to_string(10 + rng() % 90)});
}

}  // namespace

int main(int argc, char** argv) {
  return nss::run_app("constraint_bench", [&] {
    if (argc != 3) throw nss::UsageError("bench", "usage: constraint_bench TOKENIZER_JSON RECORDS");
    const auto tokenizer = nss::tokenizer::Tokenizer::from_file(argv[1]);
    const long rss_before = resident_kib();
    auto start = Clock::now();
    nss::generate::VocabularyBytes bytes{tokenizer.token_bytes(true), tokenizer.token_bytes(false)};
    const double bytes_seconds = since(start);
    const auto vocab = static_cast<std::int64_t>(bytes.after.size());
    start = Clock::now();
    nss::generate::RecordConstraint constraint(schema(), false, false, std::move(bytes), {0});
    const double build_seconds = since(start);
    const long rss_built = resident_kib();
    std::vector<double> first_visits, cached;
    std::vector<float> logits(static_cast<std::size_t>(vocab));
    std::mt19937 rng(1);
    std::int64_t tokens = 0;
    for (int r = 0; r < std::stoi(argv[2]); ++r) {
      std::int64_t state = constraint.start();
      for (const std::int32_t id : tokenizer.encode(record(rng), false)) {
        const std::size_t known = constraint.cached_masks();
        start = Clock::now();
        constraint.mask(state, logits.data(), vocab);
        (constraint.cached_masks() > known ? first_visits : cached).push_back(since(start));
        state = constraint.advance(state, id);
        if (state == constraint.kRefused) throw nss::InternalError("bench", "a record was refused");
        ++tokens;
      }
    }
    double total = 0;
    for (const double s : first_visits) total += s;
    for (const double s : cached) total += s;
    std::vector<double> all = first_visits;
    all.insert(all.end(), cached.begin(), cached.end());
    std::cout << nlohmann::json{{"vocab", vocab},
                                {"token_bytes_seconds", bytes_seconds},
                                {"build_seconds", build_seconds},
                                {"build_rss_mib", (rss_built - rss_before) / 1024.0},
                                {"rss_after_masks_mib", (resident_kib() - rss_before) / 1024.0},
                                {"tokens", tokens},
                                {"masks_cached", constraint.cached_masks()},
                                {"mask_median_seconds", median(all)},
                                {"first_visit_median_seconds", median(first_visits)},
                                {"cached_median_seconds", median(cached)},
                                {"mask_total_seconds", total}}
                     .dump(2)
              << "\n";
    return nss::ExitCode::kOk;
  });
}
