// nss_prepare_data's work: text, JSONL and CSV inputs -> a byte-level token
// dataset (token_file_format.h), written atomically.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "data/document_source.h"

namespace nss::data {

struct PrepareOptions {
  std::vector<std::string> inputs;
  std::string output;
  std::optional<InputFormat> format;  // unset: from each input's extension
};

struct PrepareSummary {
  std::int64_t documents = 0;
  std::int64_t tokens = 0;
  std::int64_t input_bytes = 0;  // document bytes (after JSONL/CSV serialisation)
};

/// Tokenizes every document of `inputs` in order (BOS, bytes, EOS) into
/// `output`. Reads the inputs twice, once to count and once to write, so
/// memory stays bounded by the largest document. UsageError for no inputs or
/// an output that is also an input; DataError as for_each_document.
PrepareSummary prepare_byte_level_dataset(const PrepareOptions& options);

}  // namespace nss::data
