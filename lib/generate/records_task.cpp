#include "generate/records_task.h"

#include "core/error.h"
#include "data/example_source.h"

namespace nss::generate {
namespace {

std::string text_field(const nlohmann::json& dataset, const char* key) {
  const auto it = dataset.find(key);
  return it != dataset.end() && it->is_string() ? it->get<std::string>() : "";
}

std::optional<std::int64_t> id_field(const nlohmann::json& dataset, const char* key) {
  const auto it = dataset.find(key);
  if (it == dataset.end() || !it->is_number_integer()) return std::nullopt;
  return it->get<std::int64_t>();
}

}  // namespace

RecordsTask records_task(const nlohmann::json& dataset, const std::string& step_dir) {
  const std::string format = dataset.is_object() ? text_field(dataset, "format") : "";
  if (format != "records")
    throw UsageError("generate",
                     "--records needs a model fine-tuned on records data, but " + step_dir +
                         (format.empty() ? " holds no record of its training data's preparation"
                                         : " was trained on '" + format + "' data"),
                     "fine-tune on a CSV table prepared with nss_prepare_data --format records "
                     "(docs/data.md), then generate from that run's step; for a PEFT adapter or "
                     "a Hugging Face directory, name the prepared data with --records-data "
                     "FILE.h5");
  RecordsTask task;
  const auto schema = dataset.find("records_schema");
  if (schema == dataset.end() || !schema->is_object())
    throw DataError("generate", step_dir + ": state.dataset has no records_schema object",
                    "prepare the training data again with nss_prepare_data --format records");
  task.schema = RecordSchema::from_json(schema->dump());
  data::RecordsOptions options;
  options.group_by = text_field(dataset, "group_by");
  options.order_by = text_field(dataset, "order_by");
  task.grouped = !options.group_by.empty();
  const std::string prompt_template = text_field(dataset, "prompt_template");
  if (prompt_template.empty())
    throw DataError("generate", step_dir + ": state.dataset has no prompt_template",
                    "prepare the training data again with nss_prepare_data --format records");
  std::vector<std::string> columns;
  for (const auto& column : task.schema.columns) columns.push_back(column.name);
  task.prompt = data::render_prompt_template(prompt_template, columns, options);
  task.bos_token_id = id_field(dataset, "bos_token_id");
  task.eos_token_id = id_field(dataset, "eos_token_id");
  return task;
}

}  // namespace nss::generate
