#include "data/prepare_dataset.h"

#include <filesystem>
#include <set>
#include <vector>

#include "core/error.h"
#include "data/byte_tokenizer.h"
#include "data/token_file_writer.h"

namespace nss::data {
namespace {

void check_options(const PrepareOptions& options) {
  if (options.inputs.empty())
    throw UsageError("data", "no inputs", "pass at least one --input PATH");
  if (options.output.empty()) throw UsageError("data", "no output", "pass --output OUT.h5");
  std::error_code error;
  for (const auto& input : options.inputs)
    if (std::filesystem::equivalent(input, options.output, error))
      throw UsageError("data", "the output " + options.output + " is also an input",
                       "write the dataset to another path");
  const bool examples = options.format && is_example_format(*options.format);
  if (options.max_tokens && !examples)
    throw UsageError("data", "--max-tokens applies to examples (--format sft or records)",
                     "documents are cut to data.seq_len when training; drop --max-tokens");
  if (options.max_tokens && *options.max_tokens < 1)
    throw UsageError("data", "--max-tokens is " + std::to_string(*options.max_tokens),
                     "give a positive number of tokens per example");
  if (options.format == InputFormat::kChat)
    throw UsageError("data",
                     "nss_prepare_data cannot make chat examples: they are rendered with the "
                     "model tokenizer's chat_template",
                     "use scripts/prepare_data_hf.py --tokenizer DIR --format chat");
  if (options.format == InputFormat::kRecords && options.inputs.size() != 1)
    throw UsageError("data",
                     "--format records takes one CSV table, got " +
                         std::to_string(options.inputs.size()) + " inputs",
                     "combine the tables into one CSV with one header");
  const bool records_flags = !options.records.prompt_template.empty() ||
                             !options.records.group_by.empty() || !options.records.order_by.empty();
  if (records_flags && options.format != InputFormat::kRecords)
    throw UsageError("data",
                     "--prompt-template, --group-by and --order-by apply to --format records",
                     "add --format records, or drop them");
}

TokenFileMetadata byte_level_metadata() {
  TokenFileMetadata metadata;
  metadata.tokenizer = byte_tokenizer::kName;
  metadata.vocab_size = byte_tokenizer::kVocabSize;
  metadata.bos_token_id = byte_tokenizer::kBos;
  metadata.eos_token_id = byte_tokenizer::kEos;
  return metadata;
}

PrepareSummary prepare_documents(const PrepareOptions& options) {
  std::vector<InputFormat> formats;
  std::set<std::string> names;
  for (const auto& input : options.inputs) {
    formats.push_back(options.format ? *options.format : input_format_for(input));
    names.insert(input_format_name(formats.back()));
  }
  PrepareSummary counted;
  for (std::size_t i = 0; i < options.inputs.size(); ++i)
    counted.documents += for_each_document(options.inputs[i], formats[i], [&](std::string_view d) {
      counted.input_bytes += static_cast<std::int64_t>(d.size());
      counted.tokens += byte_tokenizer::document_tokens(d.size());
    });

  TokenFileWriter writer(options.output, DType::kUInt16, counted.tokens);
  PrepareSummary written;
  std::vector<std::int64_t> tokens;
  for (std::size_t i = 0; i < options.inputs.size(); ++i)
    written.documents += for_each_document(options.inputs[i], formats[i], [&](std::string_view d) {
      // Stop before the writer sees more than pass one counted.
      if (written.tokens + byte_tokenizer::document_tokens(d.size()) > counted.tokens)
        throw DataError("data", "input " + options.inputs[i] + " changed while being read",
                        "run nss_prepare_data again on inputs that are not being written");
      written.input_bytes += static_cast<std::int64_t>(d.size());
      tokens.clear();
      byte_tokenizer::encode_document(d, tokens);
      writer.append(tokens.data(), static_cast<std::int64_t>(tokens.size()));
      writer.end_document();
      written.tokens += static_cast<std::int64_t>(tokens.size());
    });
  if (written.tokens != counted.tokens || written.documents != counted.documents)
    throw DataError("data", "the inputs changed while being read",
                    "run nss_prepare_data again on inputs that are not being written");

  TokenFileMetadata metadata = byte_level_metadata();
  metadata.preparation.format = names.size() == 1 ? *names.begin() : "mixed";
  writer.commit(metadata);
  return written;
}

// One example as BOS prompt completion EOS; the completion and EOS are targets.
struct EncodedExample {
  std::vector<std::int64_t> tokens;
  std::vector<std::uint8_t> mask;
};

EncodedExample encode_example(const Example& example, std::optional<std::int64_t> max_tokens) {
  EncodedExample out;
  out.tokens.push_back(byte_tokenizer::kBos);
  for (const unsigned char byte : example.prompt) out.tokens.push_back(byte);
  out.mask.assign(out.tokens.size(), 0);
  for (const unsigned char byte : example.completion) out.tokens.push_back(byte);
  out.tokens.push_back(byte_tokenizer::kEos);
  out.mask.resize(out.tokens.size(), 1);
  if (max_tokens && static_cast<std::int64_t>(out.tokens.size()) > *max_tokens) {
    out.tokens.resize(static_cast<std::size_t>(*max_tokens));
    out.mask.resize(static_cast<std::size_t>(*max_tokens));
  }
  return out;
}

PrepareSummary prepare_examples(const PrepareOptions& options) {
  ExampleSet set;
  if (*options.format == InputFormat::kRecords) {
    set = read_record_examples(options.inputs.front(), options.records);
  } else {
    for (const auto& input : options.inputs) {
      ExampleSet more = read_sft_examples(input);
      set.preparation = more.preparation;
      for (auto& example : more.examples) set.examples.push_back(std::move(example));
    }
  }
  PrepareSummary summary;
  std::vector<EncodedExample> kept;
  for (const Example& example : set.examples) {
    EncodedExample encoded = encode_example(example, options.max_tokens);
    std::int64_t targets = 0;
    for (const std::uint8_t m : encoded.mask) targets += m;
    if (targets == 0) {
      ++summary.dropped_examples;
      continue;
    }
    summary.input_bytes +=
        static_cast<std::int64_t>(example.prompt.size() + example.completion.size());
    summary.target_tokens += targets;
    summary.tokens += static_cast<std::int64_t>(encoded.tokens.size());
    kept.push_back(std::move(encoded));
  }
  if (kept.empty())
    throw DataError("data",
                    "no example keeps a target token: all " +
                        std::to_string(summary.dropped_examples) +
                        " completions lie beyond --max-tokens",
                    "raise --max-tokens or shorten the prompts");
  TokenFileWriter writer(options.output, DType::kUInt16, summary.tokens, /*with_loss_mask=*/true);
  for (const EncodedExample& example : kept) {
    writer.append(example.tokens.data(), static_cast<std::int64_t>(example.tokens.size()),
                  example.mask.data());
    writer.end_document();
  }
  summary.documents = static_cast<std::int64_t>(kept.size());
  TokenFileMetadata metadata = byte_level_metadata();
  metadata.preparation = set.preparation;
  metadata.dropped_examples = summary.dropped_examples;
  writer.commit(metadata);
  return summary;
}

}  // namespace

PrepareSummary prepare_byte_level_dataset(const PrepareOptions& options) {
  check_options(options);
  if (options.format && is_example_format(*options.format)) return prepare_examples(options);
  return prepare_documents(options);
}

}  // namespace nss::data
