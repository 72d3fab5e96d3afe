#include "evaluate/pii_replay.h"

#include <cmath>
#include <unordered_set>

#include "core/error.h"

namespace nss::evaluate {
namespace {

const Column& column_of(const Table& table, const std::string& name, const char* which) {
  const std::ptrdiff_t index = table.index_of(name);
  if (index < 0)
    throw DataError("evaluate",
                    "the PII report names the column " + name + ", which the " + which + " table " +
                        table.path + " does not have",
                    "give the PII report nss_prepare_data wrote for this training table");
  return table.columns[static_cast<std::size_t>(index)];
}

// The distinct non-missing values of `training` and how often `synthetic`
// holds them: numbers as doubles (1 == 1.0 == True), text as bytes.
template <typename Value, typename Get>
void count_matches(const Column& training, const Column& synthetic, Get get,
                   PiiReplayDatum& datum) {
  std::unordered_set<Value> values, matched;
  for (std::size_t r = 0; r < training.rows(); ++r)
    if (!training.is_missing(r)) {
      ++datum.total_training_data;
      values.insert(get(training, r));
    }
  datum.unique_training_data = static_cast<std::int64_t>(values.size());
  if (training.numeric() != synthetic.numeric()) return;  // "5" is not 5
  for (std::size_t r = 0; r < synthetic.rows(); ++r) {
    if (synthetic.is_missing(r)) continue;
    const Value value = get(synthetic, r);
    if (!values.count(value)) continue;
    ++datum.total_synthetic_data;
    matched.insert(value);
  }
  datum.unique_synthetic_data = static_cast<std::int64_t>(matched.size());
}

}  // namespace

double replay_percentage(std::int64_t unique_synthetic, std::int64_t unique_training) {
  if (unique_training == 0) return 0;
  double share = static_cast<double>(unique_synthetic) / static_cast<double>(unique_training);
  share = share * 100.0;
  share = share * 10.0;
  return std::ceil(share) / 10.0;
}

PiiReplayResult measure_pii_replay(const Table& training, const Table& synthetic,
                                   const std::vector<PiiColumn>& columns) {
  PiiReplayResult result;
  result.training_total_records = static_cast<std::int64_t>(training.rows);
  result.synthetic_total_records = static_cast<std::int64_t>(synthetic.rows);
  for (const PiiColumn& pii : columns) {
    const Column& train = column_of(training, pii.column, "training");
    const Column& synth = column_of(synthetic, pii.column, "synthetic");
    PiiReplayDatum datum;
    datum.column_name = pii.column;
    datum.column_assigned_type = pii.entity;
    datum.pii_type = pii.entity;
    if (train.numeric())
      count_matches<double>(
          train, synth, [](const Column& c, std::size_t r) { return c.numbers[r]; }, datum);
    else
      count_matches<std::string>(
          train, synth, [](const Column& c, std::size_t r) { return c.texts[r]; }, datum);
    if (pii.reported_cells >= 0 && pii.reported_cells != datum.total_training_data)
      throw DataError("evaluate",
                      "the PII report was made from another training table (column " + pii.column +
                          ": " + std::to_string(datum.total_training_data) +
                          " cells, the report says " + std::to_string(pii.reported_cells) + ")",
                      "give the PII report nss_prepare_data wrote for this training table");
    datum.unique_synthetic_data_percentage =
        replay_percentage(datum.unique_synthetic_data, datum.unique_training_data);
    result.pii_replay_data.push_back(std::move(datum));
  }
  return result;
}

}  // namespace nss::evaluate
