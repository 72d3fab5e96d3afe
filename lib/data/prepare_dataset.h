// nss_prepare_data's work: text, JSONL and CSV documents, or sft and records
// examples, -> a byte-level token dataset (token_file_format.h), written
// atomically.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "data/document_source.h"
#include "data/example_source.h"

namespace nss::data {

struct PrepareOptions {
  std::vector<std::string> inputs;
  std::string output;
  std::optional<InputFormat> format;       // unset: from each input's extension
  RecordsOptions records;                  // --format records
  std::optional<std::int64_t> max_tokens;  // examples: keep the first N tokens of each
};

struct PrepareSummary {
  std::int64_t documents = 0;
  std::int64_t tokens = 0;
  std::int64_t input_bytes = 0;       // document bytes (after JSONL/CSV serialisation)
  std::int64_t target_tokens = 0;     // examples: tokens with loss_mask 1
  std::int64_t dropped_examples = 0;  // examples: no target left after max_tokens
};

/// Tokenizes every document of `inputs` in order (BOS, bytes, EOS) into
/// `output`, with /document_offsets. Reads the inputs twice, once to count
/// and once to write, so memory stays bounded by the largest document. With
/// an example format (sft, records) each example is BOS, prompt, completion,
/// EOS with a /loss_mask marking completion and EOS; examples are held in
/// memory. UsageError for no inputs, an output that is also an input, chat
/// (needs a chat template: scripts/prepare_data_hf.py), records with other
/// than one input, max_tokens without examples or below 1; DataError as for
/// for_each_document and the example readers.
PrepareSummary prepare_byte_level_dataset(const PrepareOptions& options);

}  // namespace nss::data
