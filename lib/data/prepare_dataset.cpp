#include "data/prepare_dataset.h"

#include <filesystem>
#include <vector>

#include "core/error.h"
#include "data/byte_tokenizer.h"
#include "data/token_file_writer.h"

namespace nss::data {
namespace {

constexpr std::size_t kFlushTokens = std::size_t{1} << 20;

void check_options(const PrepareOptions& options) {
  if (options.inputs.empty())
    throw UsageError("data", "no inputs", "pass at least one --input PATH");
  if (options.output.empty()) throw UsageError("data", "no output", "pass --output OUT.h5");
  std::error_code error;
  for (const auto& input : options.inputs)
    if (std::filesystem::equivalent(input, options.output, error))
      throw UsageError("data", "the output " + options.output + " is also an input",
                       "write the dataset to another path");
}

InputFormat format_of(const PrepareOptions& options, const std::string& input) {
  return options.format ? *options.format : input_format_for(input);
}

}  // namespace

PrepareSummary prepare_byte_level_dataset(const PrepareOptions& options) {
  check_options(options);
  std::vector<InputFormat> formats;
  for (const auto& input : options.inputs) formats.push_back(format_of(options, input));

  PrepareSummary counted;
  for (std::size_t i = 0; i < options.inputs.size(); ++i)
    counted.documents += for_each_document(options.inputs[i], formats[i], [&](std::string_view d) {
      counted.input_bytes += static_cast<std::int64_t>(d.size());
      counted.tokens += byte_tokenizer::document_tokens(d.size());
    });

  TokenFileWriter writer(options.output, DType::kUInt16, counted.tokens);
  PrepareSummary written;
  std::vector<std::int64_t> tokens;
  tokens.reserve(kFlushTokens);
  const auto flush = [&] {
    writer.append(tokens.data(), static_cast<std::int64_t>(tokens.size()));
    written.tokens += static_cast<std::int64_t>(tokens.size());
    tokens.clear();
  };
  for (std::size_t i = 0; i < options.inputs.size(); ++i)
    written.documents += for_each_document(options.inputs[i], formats[i], [&](std::string_view d) {
      // Stop before the writer sees more than pass one counted.
      if (written.tokens + static_cast<std::int64_t>(tokens.size()) +
              byte_tokenizer::document_tokens(d.size()) >
          counted.tokens)
        throw DataError("data", "input " + options.inputs[i] + " changed while being read",
                        "run nss_prepare_data again on inputs that are not being written");
      written.input_bytes += static_cast<std::int64_t>(d.size());
      byte_tokenizer::encode_document(d, tokens);
      if (tokens.size() >= kFlushTokens) flush();
    });
  flush();
  if (written.tokens != counted.tokens || written.documents != counted.documents)
    throw DataError("data", "the inputs changed while being read",
                    "run nss_prepare_data again on inputs that are not being written");

  TokenFileMetadata metadata;
  metadata.tokenizer = byte_tokenizer::kName;
  metadata.vocab_size = byte_tokenizer::kVocabSize;
  metadata.documents = written.documents;
  metadata.bos_token_id = byte_tokenizer::kBos;
  metadata.eos_token_id = byte_tokenizer::kEos;
  writer.commit(metadata);
  return written;
}

}  // namespace nss::data
