#include "data/table_pii.h"

#include <chrono>
#include <filesystem>

#include "core/error.h"
#include "core/output_location.h"
#include "core/sha256.h"
#include "data/csv_records.h"
#include "data/output_names.h"
#include "data/records_holdout.h"
#include "ner/entity_tagger.h"
#include "pii/pii_key.h"
#include "pii/pii_report.h"
#include "pii/word_lists.h"

namespace nss::data {
namespace {

constexpr const char* kComponent = "data";

bool any_pii_option(const PiiPreparation& options) {
  return !options.entities.empty() || !options.columns.empty() || !options.keep.empty() ||
         !options.key_path.empty() || !options.report_path.empty() || !options.ner_model.empty();
}

OutputTarget private_file(const std::string& path, const char* option) {
  OutputTarget target;
  target.path = path;
  target.component = kComponent;
  target.option = option;
  target.existing = ExistingOutput::kReplaceFile;
  target.private_data = true;
  return target;
}

// --pii-entities, --pii-column and --pii-keep as the classifier takes them,
// every named column checked against the header.
pii::ClassifierOptions classifier_options(const PiiPreparation& options,
                                          const RecordsTable& table) {
  pii::ClassifierOptions out;
  if (!options.entities.empty()) out.entities = pii::parse_entity_list(options.entities);
  for (const std::string& given : options.columns) {
    const auto equals = given.rfind('=');
    if (equals == std::string::npos || equals == 0)
      throw UsageError(kComponent, "--pii-column " + given + ": expected COLUMN=ENTITY",
                       "give the column and its entity, e.g. --pii-column contact=email, or "
                       "COLUMN=none to leave it unclassified");
    const std::string column = given.substr(0, equals), entity = given.substr(equals + 1);
    column_index(table.header, column, "--pii-column", table.path);
    if (out.forced.count(column))
      throw UsageError(kComponent, "--pii-column names " + column + " twice",
                       "give each column one entity");
    if (entity == "none") {
      out.forced[column] = std::nullopt;
      continue;
    }
    const auto parsed = pii::parse_entity(entity);
    if (!parsed)
      throw UsageError(kComponent, "--pii-column " + given + ": unknown entity '" + entity + "'",
                       "choose one of: " + pii::entity_names() + ", or none");
    out.forced[column] = parsed;
  }
  for (const std::string& column : options.keep) {
    column_index(table.header, column, "--pii-keep", table.path);
    if (out.forced.count(column))
      throw UsageError(kComponent, column + " is given both --pii-keep and --pii-column",
                       "keep the column as it is (--pii-keep) or give its entity, not both");
    out.kept.insert(column);
  }
  return out;
}

std::vector<std::int64_t> held_rows(const std::vector<bool>& held_out) {
  std::vector<std::int64_t> rows;
  for (std::size_t r = 0; r < held_out.size(); ++r)
    if (held_out[r]) rows.push_back(static_cast<std::int64_t>(r));
  return rows;
}

bool changes_cells(pii::PiiMode mode) {
  return mode != pii::PiiMode::kDetect;
}

bool needs_key(pii::PiiMode mode) {
  return mode == pii::PiiMode::kReplace || mode == pii::PiiMode::kHash;
}

}  // namespace

std::optional<pii::PiiMode> requested_pii_mode(const PiiPreparation& options,
                                               std::optional<InputFormat> format,
                                               std::size_t inputs) {
  const bool records = format == InputFormat::kRecords, csv = format == InputFormat::kCsv;
  std::string mode = options.mode;
  if (mode.empty()) mode = records ? "replace" : "off";
  if (mode == "off") {
    if (any_pii_option(options))
      throw UsageError(kComponent,
                       "--pii-entities, --pii-column, --pii-keep, --pii-key, --pii-report and "
                       "--pii-ner-model "
                       "need PII handling, and it is off",
                       "give --pii detect|replace|hash|redact, or drop them");
    return std::nullopt;
  }
  const pii::PiiMode parsed = pii::parse_pii_mode(mode);
  if (!records && !csv)
    throw UsageError(kComponent,
                     "--pii works on tables (--format records or csv); text, JSONL and "
                     "instruction documents are not scanned",
                     "prepare the table with --format records or csv, or drop --pii");
  if (csv && inputs != 1)
    throw UsageError(kComponent,
                     "--pii with --format csv takes one table, got " + std::to_string(inputs) +
                         " inputs (each is classified as a whole)",
                     "prepare the tables one at a time with one --pii-key, or combine them "
                     "into one CSV");
  return parsed;
}

std::string pii_report_path(const PiiPreparation& options, const std::string& output) {
  return options.report_path.empty() ? beside_output(output, ".pii.json") : options.report_path;
}

std::string pii_key_path(const PiiPreparation& options, const std::string& output) {
  return options.key_path.empty() ? beside_output(output, ".pii.key") : options.key_path;
}

std::string training_csv_path(const std::string& output) {
  return beside_output(output, ".training.csv");
}

void check_pii_paths(const PiiPreparation& options, pii::PiiMode mode, const std::string& input,
                     const std::string& output, bool records) {
  std::vector<std::string> written{pii_report_path(options, output)};
  if (needs_key(mode)) written.push_back(pii_key_path(options, output));
  if (records && changes_cells(mode)) written.push_back(training_csv_path(output));
  std::error_code error;
  for (const std::string& path : written)
    if (std::filesystem::equivalent(input, path, error) ||
        std::filesystem::equivalent(output, path, error))
      throw UsageError(kComponent, path + " would replace the input or the token file",
                       "give --pii-report and --pii-key paths of their own, or write the dataset "
                       "under another name (--output)");
  check_output_path(private_file(written.front(), "--pii-report"));
  if (records && changes_cells(mode))
    check_output_path(private_file(training_csv_path(output), "--output"));
}

TransformedTable transform_table(const PiiPreparation& options, pii::PiiMode mode,
                                 const HoldoutRecord& source, RecordsTable& training,
                                 RecordsTable* holdout, const std::vector<bool>& held_out,
                                 const std::string& output) {
  const auto start = std::chrono::steady_clock::now();
  TransformedTable out;
  out.mode = mode;
  pii::PiiOptions pii_options{mode, classifier_options(options, training)};
  const pii::WordLists lists = pii::load_word_lists(pii::faker_dir());
  std::unique_ptr<ner::EntityTagger> tagger;
  if (!options.ner_model.empty()) {
    tagger = ner::EntityTagger::load(options.ner_model, pii_options.classifier.entities);
    pii_options.text_model = tagger.get();
  }
  std::optional<pii::PiiKey> key;
  if (needs_key(mode)) {
    out.key_path = pii_key_path(options, output);
    key = pii::read_or_create_key_file(out.key_path, out.key_created);
  }
  std::vector<pii::TableRows*> others;
  if (holdout) others.push_back(&holdout->rows);
  out.result = pii::transform_tables(training.header, training.rows, others, pii_options,
                                     key ? &*key : nullptr, lists);
  pii::PiiReportInfo& info = out.info;
  info.mode = mode;
  info.entities = pii_options.classifier.entities;
  info.source_table = source.source_table;
  info.source_sha256 = source.source_sha256;
  info.training_rows = static_cast<std::int64_t>(training.rows.size());
  info.holdout_rows = holdout ? static_cast<std::int64_t>(holdout->rows.size()) : 0;
  info.holdout_source_rows = held_rows(held_out);
  info.key_id = key ? key->id() : "";
  if (tagger) info.named_entity_model = tagger->describe();
  info.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

PiiRecord stage_pii_outputs(const PiiPreparation& options, const TransformedTable& table,
                            const RecordsTable* training, const std::string& output,
                            StagedOutputs& staged) {
  PiiRecord record;
  record.mode = std::string(pii::pii_mode_name(table.mode));
  record.key_id = table.info.key_id;
  if (training && changes_cells(table.mode)) {
    const std::string text = table_csv(*training);
    const OutputTarget target = private_file(training_csv_path(output), "--output");
    staged.stage(target, text);
    record.training_table = absolute_path(target.path);
    record.training_sha256 = sha256_hex(text);
  }
  const OutputTarget report = private_file(pii_report_path(options, output), "--pii-report");
  const std::string text = pii::pii_report_text(table.info, table.result);
  staged.stage(report, text);
  record.report_sha256 = sha256_hex(text);
  record.report = absolute_path(report.path);
  return record;
}

std::string detect_warning(const TransformedTable& table) {
  const pii::PiiFindings found = pii::pii_findings(table.result);
  if (table.mode != pii::PiiMode::kDetect || !found.any()) return "";
  return "--pii detect: " + std::to_string(found.columns.size()) + " columns and " +
         std::to_string(found.values_in_text) +
         " values inside free text hold personal data; the token file contains them unchanged "
         "(prepare with --pii replace, hash or redact to keep them from the model)";
}

std::string pii_summary(const TransformedTable& table, const PiiRecord& record) {
  const pii::PiiFindings found = pii::pii_findings(table.result);
  std::string text = "PII (" + record.mode + "): ";
  text += found.columns.empty() ? "no column classified" : "columns " + found.column_list();
  text += "; " + std::to_string(found.values_in_text) + " values inside the text of " +
          std::to_string(found.text_columns) + " other columns";
  text += "; report " + record.report;
  if (!table.key_path.empty())
    text += "; key " + table.key_path + (table.key_created ? " (created: keep it private)" : "");
  if (!record.training_table.empty())
    text += "; training rows as trained on " + record.training_table;
  return text;
}

}  // namespace nss::data
