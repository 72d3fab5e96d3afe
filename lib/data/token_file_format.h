// The token dataset format (docs/data.md): one HDF5 file with a contiguous
// (unchunked, uncompressed) 1-D little-endian integer dataset /tokens and
// attributes on the root group that describe it. Any tokenizer can write it;
// nss_prepare_data and scripts/prepare_data_hf.py do.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "core/dtype.h"

namespace nss::data {

/// Name of the token dataset inside the file.
inline constexpr const char* kTokensDataset = "tokens";
// Optional, contiguous, next to /tokens: uint8 per token, 1 when the token is
// a prediction target (absent: every token is).
inline constexpr const char* kLossMaskDataset = "loss_mask";
// Optional, contiguous: int64, documents + 1 entries, document d is tokens
// [offsets[d], offsets[d + 1]).
inline constexpr const char* kDocumentOffsetsDataset = "document_offsets";

/// Root-group attribute names.
inline constexpr const char* kTokenizerAttribute = "tokenizer";
// SHA-256 of the tokenizer.json the tokens were made with (Hugging Face tokenizers).
inline constexpr const char* kTokenizerSha256Attribute = "tokenizer_sha256";
inline constexpr const char* kVocabSizeAttribute = "vocab_size";
inline constexpr const char* kMaxTokenIdAttribute = "max_token_id";
inline constexpr const char* kDocumentsAttribute = "documents";
inline constexpr const char* kBosTokenIdAttribute = "bos_token_id";
inline constexpr const char* kEosTokenIdAttribute = "eos_token_id";
// How the examples were made (docs/data.md, "Instruction and record data").
inline constexpr const char* kFormatAttribute = "format";
inline constexpr const char* kPromptTemplateAttribute = "prompt_template";
inline constexpr const char* kGroupByAttribute = "group_by";
inline constexpr const char* kOrderByAttribute = "order_by";
inline constexpr const char* kRecordsSchemaAttribute = "records_schema";
inline constexpr const char* kDroppedExamplesAttribute = "dropped_examples";
// Records with a holdout (docs/data.md, "Holdout"): the table the rows came
// from, the rows set aside and which part this file holds.
inline constexpr const char* kSplitAttribute = "split";
inline constexpr const char* kSourceTableAttribute = "source_table";
inline constexpr const char* kSourceSha256Attribute = "source_sha256";
inline constexpr const char* kHoldoutTableAttribute = "holdout_table";
inline constexpr const char* kHoldoutSha256Attribute = "holdout_sha256";
inline constexpr const char* kHoldoutRowsAttribute = "holdout_rows";
inline constexpr const char* kTrainingRowsAttribute = "training_rows";
inline constexpr const char* kHoldoutSeedAttribute = "holdout_seed";
// Records prepared with PII handling (docs/data.md, "Personal data"): the
// mode, the report and the key it names, and the training rows as they were
// transformed (the evaluation's training table).
inline constexpr const char* kPiiModeAttribute = "pii_mode";
inline constexpr const char* kPiiReportAttribute = "pii_report";
inline constexpr const char* kPiiReportSha256Attribute = "pii_report_sha256";
inline constexpr const char* kPiiKeyIdAttribute = "pii_key_id";
inline constexpr const char* kTrainingTableAttribute = "training_table";
inline constexpr const char* kTrainingSha256Attribute = "training_sha256";

/// How the documents were prepared; every field empty when not recorded.
struct DatasetPreparation {
  std::string format;           // "text", "sft", "records", "chat", ...
  std::string prompt_template;  // records: the instruction before each row
  std::string group_by;         // records: one example per value of this column
  std::string order_by;         // records: row order inside a group
  std::string records_schema;   // records: JSON {"columns": [{name, type, empty_cells}]}
};

/// A records table and its split into training rows and a holdout: the
/// source table for every records preparation, the rest empty without a
/// holdout.
struct HoldoutRecord {
  std::string split;           // "training" or "holdout": the rows this file holds
  std::string source_table;    // the CSV the rows came from (absolute path)
  std::string source_sha256;   // of that CSV as read
  std::string holdout_table;   // the holdout CSV (absolute path)
  std::string holdout_sha256;  // of the holdout CSV as written
  std::optional<std::int64_t> holdout_rows;
  std::optional<std::int64_t> training_rows;
  std::optional<std::int64_t> holdout_seed;
};

/// PII handling of a records or CSV table (pii/table_transform.h); every
/// field empty when none ran (prepared with --pii off, or before it existed).
struct PiiRecord {
  std::string mode;            // "detect", "replace", "hash" or "redact"
  std::string report;          // the pii.json written (absolute path)
  std::string report_sha256;   // of that report as written
  std::string key_id;          // the key's id (replace, hash); empty otherwise
  std::string training_table;  // records, a transforming mode: the training rows as trained on
  std::string training_sha256;
};

/// What the attributes say about the tokens. Only /tokens itself is required
/// to train; an absent attribute is std::nullopt (or an empty tokenizer).
struct TokenFileMetadata {
  std::string tokenizer;                     // "byte-level", "hf:<file>", ...
  std::string tokenizer_sha256;              // of the tokenizer.json; empty if unknown
  std::optional<std::int64_t> vocab_size;    // the tokenizer's vocabulary
  std::optional<std::int64_t> max_token_id;  // largest id in /tokens
  std::optional<std::int64_t> documents;     // documents in /tokens
  std::optional<std::int64_t> bos_token_id;
  std::optional<std::int64_t> eos_token_id;
  std::optional<std::int64_t> dropped_examples;  // examples with no target left
  DatasetPreparation preparation;
  HoldoutRecord holdout;
  PiiRecord pii;
};

/// Every root attribute of `metadata` (const or not) with its name, one list
/// for the reader, the writer and the checkpoint's record:
/// visit(name, std::string&) and visit(name, std::optional<std::int64_t>&).
template <class Metadata, class Visit>
void visit_attributes(Metadata& metadata, Visit&& visit) {
  visit(kTokenizerAttribute, metadata.tokenizer);
  visit(kTokenizerSha256Attribute, metadata.tokenizer_sha256);
  visit(kVocabSizeAttribute, metadata.vocab_size);
  visit(kMaxTokenIdAttribute, metadata.max_token_id);
  visit(kDocumentsAttribute, metadata.documents);
  visit(kBosTokenIdAttribute, metadata.bos_token_id);
  visit(kEosTokenIdAttribute, metadata.eos_token_id);
  visit(kDroppedExamplesAttribute, metadata.dropped_examples);
  visit(kFormatAttribute, metadata.preparation.format);
  visit(kPromptTemplateAttribute, metadata.preparation.prompt_template);
  visit(kGroupByAttribute, metadata.preparation.group_by);
  visit(kOrderByAttribute, metadata.preparation.order_by);
  visit(kRecordsSchemaAttribute, metadata.preparation.records_schema);
  visit(kSplitAttribute, metadata.holdout.split);
  visit(kSourceTableAttribute, metadata.holdout.source_table);
  visit(kSourceSha256Attribute, metadata.holdout.source_sha256);
  visit(kHoldoutTableAttribute, metadata.holdout.holdout_table);
  visit(kHoldoutSha256Attribute, metadata.holdout.holdout_sha256);
  visit(kHoldoutRowsAttribute, metadata.holdout.holdout_rows);
  visit(kTrainingRowsAttribute, metadata.holdout.training_rows);
  visit(kHoldoutSeedAttribute, metadata.holdout.holdout_seed);
  visit(kPiiModeAttribute, metadata.pii.mode);
  visit(kPiiReportAttribute, metadata.pii.report);
  visit(kPiiReportSha256Attribute, metadata.pii.report_sha256);
  visit(kPiiKeyIdAttribute, metadata.pii.key_id);
  visit(kTrainingTableAttribute, metadata.pii.training_table);
  visit(kTrainingSha256Attribute, metadata.pii.training_sha256);
}

/// The tokenizer and preparation attributes (every string attribute,
/// vocab_size, bos_token_id, eos_token_id, dropped_examples and the
/// holdout's counts and seed) as one JSON
/// object, absent ones left out, records_schema parsed: what a checkpoint
/// records of its data, and what nss_generate --records rebuilds the
/// training prompt from.
nlohmann::json describe_preparation(const TokenFileMetadata& metadata);

/// True for the element types /tokens may have: uint16, int32, uint32, int64.
bool is_token_dtype(DType dtype);

/// "uint16, int32, uint32, int64", for messages.
const char* token_dtype_names();

/// The smallest supported element type that holds every id below `vocab_size`.
DType token_dtype_for_vocab(std::int64_t vocab_size);

}  // namespace nss::data
