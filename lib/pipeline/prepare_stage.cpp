// The table -> the token file the fine-tune reads: holdout rows set aside,
// personal data of both parts transformed under one key, records tokenised
// with the model's tokenizer (nss_prepare_data --format records, the same
// library call). Rank 0 alone.
#include <filesystem>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "checkpoint/step_directory.h"
#include "core/fs.h"
#include "core/output_location.h"
#include "core/sha256.h"
#include "data/prepare_dataset.h"
#include "data/records_holdout.h"
#include "hf/hub_cache.h"
#include "pipeline/pipeline_config.h"
#include "pipeline/stages.h"

namespace nss::pipeline {
namespace {

bool is_file(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_regular_file(path, ec);
}

// pipeline.holdout as nss_prepare_data --holdout reads it: "" for none.
std::string holdout_size(double holdout) {
  if (holdout <= 0) return "";
  if (holdout < 1) return fmt::format("{}", holdout);
  return fmt::format("{}", static_cast<std::int64_t>(holdout));
}

// The model's tokenizer directory; empty: byte-level (a model without one).
std::string tokenizer_directory(const config::Config& config) {
  if (config.model.from_pretrained.empty()) return "";
  return hf::resolve_model_directory(config.model.from_pretrained);
}

data::PrepareOptions preparation(const StageContext& context) {
  const auto& p = context.config.pipeline;
  data::PrepareOptions options;
  options.inputs = {context.options.table};
  options.output = context.paths.tokens();
  options.format = data::InputFormat::kRecords;
  options.records = {p.prompt_template, p.group_by, p.order_by};
  options.holdout.size = holdout_size(p.holdout);
  options.holdout.max_rows = p.max_holdout;
  options.holdout.seed = static_cast<std::uint64_t>(p.holdout_seed);
  options.holdout_eval = !options.holdout.size.empty();
  options.pii.mode = config::choice_name(p.pii);
  options.pii.key_path = p.pii_key;
  options.tokenizer.path = tokenizer_directory(context.config);
  return options;
}

// Every setting that shapes the token file, as text.
std::string settings_text(const data::PrepareOptions& o) {
  return fmt::format(
      "template={}\ngroup_by={}\norder_by={}\nholdout={}\nmax_holdout={}\nholdout_seed={}\n"
      "pii={}\npii_key={}\ntokenizer={}\n",
      o.records.prompt_template, o.records.group_by, o.records.order_by, o.holdout.size,
      o.holdout.max_rows, o.holdout.seed, o.pii.mode, o.pii.key_path, o.tokenizer.path);
}

class PrepareStage : public Stage {
 public:
  const char* name() const override { return "prepare"; }
  bool on_every_rank() const override { return false; }

  std::map<std::string, std::string> inputs(const StageContext& context) const override {
    const auto options = preparation(context);
    std::map<std::string, std::string> in{{"table", sha256_file_hex(context.options.table)},
                                          {"settings", sha256_hex(settings_text(options))}};
    const std::string tokenizer = options.tokenizer.path + "/tokenizer.json";
    if (!options.tokenizer.path.empty() && is_file(tokenizer))
      in["tokenizer"] = sha256_file_hex(tokenizer);
    return in;
  }

  // Preparing again would change the data under the fine-tune's steps.
  void check_can_run(const StageContext& context) const override {
    const auto steps = checkpoint::committed_steps(context.checkpoint_dir);
    if (steps.empty()) return;
    throw UsageError(
        "pipeline",
        fmt::format("{} holds steps fine-tuned on the data prepared before (newest: step {}), "
                    "but the table, a pipeline setting that shapes the data or the prepared "
                    "files changed since: preparing again would change the data under them",
                    context.checkpoint_dir, steps.front()),
        fmt::format("run the changed table in a new run directory (--set run.output_dir=PATH), "
                    "put the table and settings back, or remove {} to fine-tune again from "
                    "the start",
                    context.paths.training_run()));
  }

  StageResult run(const StageContext& context) override {
    create_directories(context.paths.data(), "pipeline");
    const auto options = preparation(context);
    data::PreparedTokenizer tokenizer;
    const auto summary = data::prepare_dataset(options, &tokenizer);
    spdlog::info("[prepare] {}: {} records, {} tokens ({} target), {}", options.output,
                 summary.documents, summary.tokens, summary.target_tokens, tokenizer.name);
    if (!summary.holdout_table.empty())
      spdlog::info("[prepare] held out {} rows in {}", summary.holdout_rows, summary.holdout_table);
    if (!summary.warning.empty()) spdlog::warn("[prepare] {}", summary.warning);
    if (!summary.pii.empty()) spdlog::info("[prepare] {}", summary.pii);
    if (!summary.pii_warning.empty()) spdlog::warn("[prepare] {}", summary.pii_warning);

    StageResult result;
    result.outputs["tokens"] = output_file(options.output);
    const std::map<std::string, std::string> beside{
        {"holdout_table", data::holdout_csv_path(options.output)},
        {"holdout_tokens", context.paths.holdout_tokens()},
        {"training_table", data::training_csv_path(options.output)},
        {"pii_report", data::pii_report_path(options.pii, options.output)}};
    for (const auto& [name, path] : beside)
      if (is_file(path)) result.outputs[name] = output_file(path);
    result.facts = {{"table", context.options.table},
                    {"records", summary.documents},
                    {"tokens", summary.tokens},
                    {"target_tokens", summary.target_tokens},
                    {"holdout_rows", summary.holdout_rows},
                    {"tokenizer", tokenizer.name},
                    {"pii", options.pii.mode}};
    return result;
  }

  // The fine-tune validates on the holdout's token file when this run, or
  // the earlier one it skipped to, made one.
  void publish(const StageContext& context) const override {
    const bool holdout = context.ledger->stage(name()).outputs.count("holdout_tokens") > 0;
    write_output_file(
        {context.training_config, "pipeline", "run.output_dir", ExistingOutput::kReplaceFile},
        training_yaml(context.config, holdout));
  }
};

}  // namespace

std::unique_ptr<Stage> make_prepare_stage() {
  return std::make_unique<PrepareStage>();
}

}  // namespace nss::pipeline
