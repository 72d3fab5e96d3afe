#include "preflight/holdout_check.h"

#include <set>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/sha256.h"
#include "data/document_tokenizer.h"
#include "data/example_source.h"

namespace nss::preflight {
namespace {

constexpr const char* kId = "data.holdout";

std::string ids_key(const std::vector<std::int64_t>& ids) {
  return std::string(reinterpret_cast<const char*>(ids.data()), ids.size() * sizeof(ids[0]));
}

// Each training example's answer (its target tokens without the EOS).
std::set<std::string> training_answers(const data::TokenDataset& tokens) {
  std::set<std::string> answers;
  for (std::int64_t d = 0; d < tokens.num_documents(); ++d) {
    const std::int64_t first = tokens.document_offset(d);
    const std::int64_t count = tokens.document_offset(d + 1) - first;
    std::vector<std::int64_t> ids(static_cast<std::size_t>(count));
    std::vector<std::uint8_t> mask(static_cast<std::size_t>(count));
    tokens.read(first, count, ids.data());
    tokens.read_loss_mask(first, count, mask.data());
    std::vector<std::int64_t> answer;
    for (std::size_t i = 0; i < ids.size(); ++i)
      if (mask[i]) answer.push_back(ids[i]);
    if (!answer.empty()) answer.pop_back();
    answers.insert(ids_key(answer));
  }
  return answers;
}

std::vector<std::string> schema_columns(const std::string& schema) {
  std::vector<std::string> names;
  const auto doc = nlohmann::json::parse(schema, nullptr, false);
  if (doc.is_object() && doc.contains("columns"))
    for (const auto& column : doc["columns"]) names.push_back(column.value("name", ""));
  return names;
}

Check fail(const std::string& message, const std::string& hint) {
  return Check::fail(kId, ExitCode::kData, message, hint);
}

}  // namespace

Check holdout_check(const std::string& key, const data::TokenDataset& tokens) {
  const data::TokenFileMetadata& metadata = tokens.metadata();
  const data::HoldoutRecord& holdout = metadata.holdout;
  const std::string file = key + " " + tokens.path();
  if (holdout.split == "holdout")
    return fail(file + " holds the holdout rows of " + holdout.source_table +
                    " (split: holdout): training on them leaves nothing unseen to evaluate against",
                "set " + key + " to the training file nss_prepare_data wrote beside it");
  if (holdout.holdout_table.empty())
    return Check::skipped(kId, ExitCode::kData,
                          file +
                              " records no holdout (nss_prepare_data --holdout): nss_evaluate "
                              "can then measure no membership inference");
  const std::string& path = holdout.holdout_table;
  const std::string prepare =
      "prepare the data again (nss_prepare_data --format records --holdout)";
  std::string actual;
  try {
    actual = sha256_file_hex(path);
  } catch (const Error& e) {
    return fail("the holdout " + path + " that " + file + " records cannot be read: " + e.message(),
                "restore it, or " + prepare);
  }
  if (actual != holdout.holdout_sha256)
    return fail("the holdout " + path + " changed since " + file + " was prepared (SHA-256 " +
                    actual.substr(0, 12) + "..., recorded " + holdout.holdout_sha256.substr(0, 12) +
                    "...)",
                "restore it, or " + prepare);
  data::RecordsTable table;
  try {
    table = data::read_records_table(path);
  } catch (const Error& e) {
    return fail("the holdout " + path + ": " + e.message(), prepare);
  }
  if (table.header != schema_columns(metadata.preparation.records_schema))
    return fail("the holdout " + path + " has other columns than " + file + "'s records_schema",
                prepare);
  const auto tokenizer = data::recorded_tokenizer(metadata);
  const std::string rows = std::to_string(table.rows.size()) + " rows";
  if (!tokenizer || !tokens.has_loss_mask() || !tokens.has_document_offsets())
    return Check::warn(kId, ExitCode::kData,
                       "holdout " + path + " (" + rows +
                           ") unchanged; its rows were not compared "
                           "with the training examples (the tokenizer " +
                           metadata.tokenizer +
                           " cannot be loaded here, or is not the file the data was prepared "
                           "with: its tokenizer_sha256 differs)",
                       "keep the tokenizer the data was prepared with where it was");
  data::RecordsOptions options{metadata.preparation.prompt_template, metadata.preparation.group_by,
                               metadata.preparation.order_by};
  const std::set<std::string> answers = training_answers(tokens);
  std::vector<std::int64_t> ids;
  for (const data::Example& example : data::record_examples(table, options).examples) {
    ids.clear();
    tokenizer->encode(example.completion, ids);
    if (answers.count(ids_key(ids)))
      return fail("the holdout " + path + " has a row that " + file +
                      " trains on: " + example.completion.substr(0, 80),
                  prepare);
  }
  return Check::pass(kId, ExitCode::kData,
                     "holdout " + path + ": " + rows +
                         ", unchanged, the schema's columns, none "
                         "of them among the " +
                         std::to_string(answers.size()) + " training examples");
}

}  // namespace nss::preflight
