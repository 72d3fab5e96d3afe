// nss_prepare_data's work: text, JSONL and CSV documents, or sft and records
// examples, -> a token dataset (token_file_format.h), written atomically,
// with the byte-level tokenizer or a tokenizer.json (document_tokenizer.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "data/document_source.h"
#include "data/document_tokenizer.h"
#include "data/example_source.h"
#include "data/holdout.h"
#include "data/table_pii.h"

namespace nss::data {

struct PrepareOptions {
  std::vector<std::string> inputs;
  std::string output;
  std::optional<InputFormat> format;       // unset: from each input's extension
  RecordsOptions records;                  // --format records
  std::optional<std::int64_t> max_tokens;  // examples: keep the first N tokens of each
  TokenizerChoice tokenizer;               // empty path: byte-level
  HoldoutOptions holdout;                  // --format records: rows set aside (records_holdout.h)
  bool holdout_eval = false;               // also write the holdout as a token file
  PiiPreparation pii;                      // records and csv: personal data (table_pii.h)
};

/// The tokenizer a preparation used, for its summary line.
struct PreparedTokenizer {
  std::string name;  // "byte-level" or "hf:<tokenizer.json>"
  std::int64_t vocab_size = 0;
};

struct PrepareSummary {
  std::int64_t documents = 0;
  std::int64_t tokens = 0;
  std::int64_t input_bytes = 0;       // document bytes (after JSONL/CSV serialisation)
  std::int64_t target_tokens = 0;     // examples: tokens with loss_mask 1
  std::int64_t dropped_examples = 0;  // examples: no target left after max_tokens
  std::int64_t holdout_rows = 0;      // records: rows set aside
  std::int64_t holdout_groups = 0;    // the groups (or distinct rows) they form
  std::int64_t holdout_target = 0;    // the rows aimed at
  std::string holdout_table;          // the holdout CSV written, if any
  std::string holdout_tokens;         // --holdout-eval: the holdout's token file
  std::string warning;                // a holdout asked for but not made, and why
  std::string pii;                    // PII handling's account (pii_summary), if it ran
  std::string pii_warning;            // --pii detect found personal data and left it
};

/// Tokenizes every document of `inputs` in order ([BOS], tokens, EOS) into
/// `output`, with /document_offsets. Reads the inputs twice, once to count
/// and once to write, so memory stays bounded by the largest document. With
/// an example format (sft, records) each example is [BOS], prompt,
/// completion, EOS with a /loss_mask marking completion and EOS; examples
/// are held in memory. With options.tokenizer.path the ids, dtype and
/// attributes are those scripts/prepare_data_hf.py writes. UsageError for no
/// inputs, an output that is also an input, chat (needs a chat template:
/// scripts/prepare_data_hf.py), records with other than one input,
/// max_tokens without examples or below 1, --bos/--eos-token without a
/// tokenizer, holdout options without records (or --holdout-eval without
/// --holdout), PII options as requested_pii_mode and check_pii_paths say,
/// and as make_json_tokenizer; DataError as for for_each_document, the
/// example readers, make_json_tokenizer and a bad PII key file. Records (and
/// csv with --pii) are read whole, split, and transformed before anything is
/// tokenised; nothing is written until every example is encoded, the token
/// file, which names the others, last. Fills `used` (when given) once the
/// tokenizer is loaded.
PrepareSummary prepare_dataset(const PrepareOptions& options, PreparedTokenizer* used = nullptr);

}  // namespace nss::data
