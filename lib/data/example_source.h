// Instruction examples for fine-tuning: each is a prompt and its completion,
// and only the completion (and the EOS after it) will be a prediction target.
//
//   sft      JSONL, one {"prompt": "...", "completion": "..."} per line.
//   records  one CSV table, NeMo Safe Synthesizer style: an instruction
//            prompt (a template naming the columns) and the row as one JSON
//            object; with group_by, one example per group of rows (in the
//            order of their first appearance), the rows as JSON lines
//            ordered by order_by.
// The chat format needs a tokenizer's chat template and is made only by
// scripts/prepare_data_hf.py. docs/data.md specifies all three, so the
// Python preparation produces the same prompts and completions.
#pragma once

#include <string>
#include <vector>

#include "data/token_file_format.h"

namespace nss::data {

struct Example {
  std::string prompt;
  std::string completion;
};

struct RecordsOptions {
  std::string prompt_template;  // empty: the default for (un)grouped records
  std::string group_by;         // empty: one example per row
  std::string order_by;         // only with group_by
};

/// Examples and how they were made (DatasetPreparation's format, template,
/// grouping and the inferred schema).
struct ExampleSet {
  std::vector<Example> examples;
  DatasetPreparation preparation;
};

/// The default prompt template of records without and with group_by.
extern const char* const kRecordsTemplate;
extern const char* const kGroupedRecordsTemplate;

/// The examples of an sft JSONL file; DataError "file:line" when a line is
/// not an object with string "prompt" and "completion", or there is none.
ExampleSet read_sft_examples(const std::string& path);

/// A records CSV as read: its header and rows.
struct RecordsTable {
  std::string path;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
};

/// The table of a records CSV; DataError as for the csv format, and for a
/// header without rows.
RecordsTable read_records_table(const std::string& path);

/// The examples of `table`, its schema inferred from its rows. UsageError for
/// a group_by/order_by column the header lacks, order_by without group_by, or
/// a template with an unknown {placeholder} (known: {columns}, {group_by},
/// {order_by}; "{{" and "}}" are literal braces).
ExampleSet record_examples(const RecordsTable& table, const RecordsOptions& options);

/// record_examples of read_records_table(path).
ExampleSet read_record_examples(const std::string& path, const RecordsOptions& options);

/// The index of column `name` in `header`; UsageError naming `flag`, `path`
/// and the columns there are when it has none.
std::size_t column_index(const std::vector<std::string>& header, const std::string& name,
                         const char* flag, const std::string& path);

/// `prompt_template` with its placeholders filled in (UsageError as above).
std::string render_prompt_template(const std::string& prompt_template,
                                   const std::vector<std::string>& columns,
                                   const RecordsOptions& options);

}  // namespace nss::data
