// nss_prepare_data --pii: the personal data of a records or CSV table found
// and transformed (pii/table_transform.h) before anything is tokenised —
// training rows and holdout alike, under one key — and what it leaves beside
// the token file: the pii.json report, the key, and (records, a mode that
// changes cells) the training rows as trained on, for nss_evaluate.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/staged_outputs.h"
#include "data/document_source.h"
#include "data/example_source.h"
#include "data/token_file_format.h"
#include "pii/pii_report.h"
#include "pii/table_transform.h"

namespace nss::data {

/// The --pii options as given.
struct PiiPreparation {
  std::string mode;                  // off, detect, replace, hash, redact; empty: the default
  std::string entities;              // --pii-entities; empty: NSS's defaults
  std::vector<std::string> columns;  // --pii-column COL=ENTITY (or COL=none)
  std::vector<std::string> keep;     // --pii-keep COL
  std::string key_path;              // --pii-key; empty: OUT.pii.key
  std::string report_path;           // --pii-report; empty: OUT.pii.json
  std::string ner_model;             // --pii-ner-model DIR; empty: none
};

/// The mode `options` asks for: records default to replace (personal data
/// never reaches the model unless asked), other formats to off (nullopt).
/// UsageError for an unknown mode, any PII option with --pii off or with a
/// format other than csv and records, and csv with more than one input.
std::optional<pii::PiiMode> requested_pii_mode(const PiiPreparation& options,
                                               std::optional<InputFormat> format,
                                               std::size_t inputs);

/// Where each file goes beside the token file `output` (records.h5 ->
/// records.pii.json, records.pii.key, records.training.csv), or where the
/// options put it.
std::string pii_report_path(const PiiPreparation& options, const std::string& output);
std::string pii_key_path(const PiiPreparation& options, const std::string& output);
std::string training_csv_path(const std::string& output);

/// UsageError for a file that would replace `input`, or an output path the
/// output rules refuse (a directory, a device node).
void check_pii_paths(const PiiPreparation& options, pii::PiiMode mode, const std::string& input,
                     const std::string& output, bool records);

/// A table transformed, not yet written.
struct TransformedTable {
  pii::PiiMode mode = pii::PiiMode::kDetect;
  pii::PiiResult result;
  pii::PiiReportInfo info;
  std::string key_path;  // replace and hash
  bool key_created = false;
};

/// Classifies the columns of `training` and applies the mode to it and to
/// `holdout` (may be null) in place. `source` names the table read (its
/// source_table and source_sha256) and `held_out` (per source row, empty
/// without a holdout) its holdout rows, for the report. Replace and hash read the key
/// file, creating it first when absent (pii::read_or_create_key_file).
/// With --pii-ner-model, the tagger in that directory (ner/entity_tagger.h)
/// reads the free text beside the recognizers.
/// UsageError as for the options (an unknown entity or column, COL=ENTITY
/// malformed) and for missing word lists; DataError for a bad key file.
TransformedTable transform_table(const PiiPreparation& options, pii::PiiMode mode,
                                 const HoldoutRecord& source, RecordsTable& training,
                                 RecordsTable* holdout, const std::vector<bool>& held_out,
                                 const std::string& output);

/// Stages the report (0600) and, with `training` (records in a mode that
/// changes cells), the transformed training rows for training_csv_path
/// (0600), each replacing an earlier one when published; returns what the
/// token files record.
PiiRecord stage_pii_outputs(const PiiPreparation& options, const TransformedTable& table,
                            const RecordsTable* training, const std::string& output,
                            StagedOutputs& staged);

/// With --pii detect, when personal data was found: the warning that the
/// token file holds it unchanged; else empty.
std::string detect_warning(const TransformedTable& table);

/// The console's account of `table`: the mode, the columns given an entity,
/// the spans found in free text, and the files.
std::string pii_summary(const TransformedTable& table, const PiiRecord& record);

}  // namespace nss::data
