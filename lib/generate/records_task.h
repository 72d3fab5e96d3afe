// What `nss_generate --records` asks a model for, rebuilt from what a
// checkpoint step records of its training data (state.dataset, written from
// the token file's attributes by nss_prepare_data --format records or
// scripts/prepare_data_hf.py): the prompt every training example began with
// (the stored template, its {columns}, {group_by} and {order_by} filled in
// from the schema and the grouping), the schema records are checked
// against, and the BOS and EOS ids around each example. The private
// training table itself is never read.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "generate/record_validator.h"

namespace nss::generate {

struct RecordsTask {
  std::string prompt;  // the rendered prompt, as the examples' prompt text
  RecordSchema schema;
  bool grouped = false;                      // a completion holds a group's records, one per line
  std::optional<std::int64_t> bos_token_id;  // absent: steps that did not record it
  std::optional<std::int64_t> eos_token_id;
};

/// The task of a step whose state.dataset is `dataset` (null when the step
/// has none). UsageError (exit 2) when the data was not records data;
/// DataError (exit 4) when its record is malformed.
RecordsTask records_task(const nlohmann::json& dataset, const std::string& step_dir);

}  // namespace nss::generate
