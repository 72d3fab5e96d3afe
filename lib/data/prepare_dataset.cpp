#include "data/prepare_dataset.h"

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <vector>

#include "core/error.h"
#include "core/staged_outputs.h"
#include "data/csv_records.h"
#include "data/document_tokenizer.h"
#include "data/records_holdout.h"
#include "data/token_file_writer.h"

namespace nss::data {
namespace {

// The PII mode: a single input without --format takes its format from its
// extension, as the documents do.
std::optional<pii::PiiMode> pii_mode(const PrepareOptions& options) {
  std::optional<InputFormat> format = options.format;
  if (!format && options.inputs.size() == 1 && !options.pii.mode.empty() &&
      options.pii.mode != "off")
    format = input_format_for(options.inputs.front());
  return requested_pii_mode(options.pii, format, options.inputs.size());
}

void check_options(const PrepareOptions& options) {
  if (options.inputs.empty())
    throw UsageError("data", "no inputs", "pass at least one --input PATH");
  if (options.output.empty()) throw UsageError("data", "no output", "pass --output OUT.h5");
  std::error_code error;
  for (const auto& input : options.inputs)
    if (std::filesystem::equivalent(input, options.output, error))
      throw UsageError("data", "the output " + options.output + " is also an input",
                       "write the dataset to another path");
  check_output_path(token_file_target(options.output));
  const bool examples = options.format && is_example_format(*options.format);
  if (options.max_tokens && !examples)
    throw UsageError("data", "--max-tokens applies to examples (--format sft or records)",
                     "documents are cut to data.seq_len when training; drop --max-tokens");
  if (options.max_tokens && *options.max_tokens < 1)
    throw UsageError("data", "--max-tokens is " + std::to_string(*options.max_tokens),
                     "give a positive number of tokens per example");
  const bool special_flags =
      !options.tokenizer.bos_token.empty() || !options.tokenizer.eos_token.empty();
  if (special_flags && options.tokenizer.path.empty())
    throw UsageError(
        "data", "--bos-token and --eos-token need --tokenizer",
        "add --tokenizer DIR_OR_tokenizer.json, or drop them (byte-level has its own)");
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
  if (!options.holdout.size.empty() && options.format != InputFormat::kRecords)
    throw UsageError("data", "--holdout applies to --format records",
                     "add --format records, or drop --holdout");
  if (options.holdout_eval && options.holdout.size.empty())
    throw UsageError("data", "--holdout-eval writes the holdout as a token file",
                     "add --holdout FRACTION|COUNT, or drop --holdout-eval");
  if (const auto mode = pii_mode(options))
    check_pii_paths(options.pii, *mode, options.inputs.front(), options.output,
                    options.format == InputFormat::kRecords);
  if (options.holdout.size.empty()) return;
  holdout_target(options.holdout, 0);  // checks the size
  for (const std::string& written :
       {holdout_csv_path(options.output), holdout_tokens_path(options.output)})
    if (std::filesystem::equivalent(options.inputs.front(), written, error))
      throw UsageError("data", "the holdout " + written + " would replace the input",
                       "write the dataset under another name (--output)");
}

// Pass one's ids, kept when counting means encoding (a tokenizer.json), so
// pass two writes them instead of encoding every document again: 4 bytes a
// token, about the size of the text.
struct HeldDocuments {
  std::vector<std::int32_t> ids;
  std::vector<std::int64_t> ends{0};
};

// A CSV table with PII handling: read whole, transformed, each row then the
// document the csv format makes of it.
struct TransformedDocuments {
  std::vector<std::string> documents;
  TransformedTable table;
};

std::optional<TransformedDocuments> transform_documents(const PrepareOptions& options) {
  const auto mode = pii_mode(options);
  if (!mode) return std::nullopt;
  const std::string& source = options.inputs.front();
  RecordsTable table = read_records_table(source);
  TransformedDocuments out;
  out.table = transform_table(options.pii, *mode, source_record(source), table, nullptr, {},
                              options.output);
  for (const auto& row : table.rows) out.documents.push_back(csv_row_to_json(table.header, row));
  return out;
}

PrepareSummary prepare_documents(const PrepareOptions& options,
                                 const DocumentTokenizer& tokenizer) {
  const std::optional<TransformedDocuments> transformed = transform_documents(options);
  const auto each_document = [&](std::size_t i, InputFormat format,
                                 const std::function<void(std::string_view)>& visit) {
    if (!transformed) return for_each_document(options.inputs[i], format, visit);
    for (const std::string& document : transformed->documents) visit(document);
    return static_cast<std::int64_t>(transformed->documents.size());
  };
  std::vector<InputFormat> formats;
  std::set<std::string> names;
  for (const auto& input : options.inputs) {
    formats.push_back(options.format ? *options.format : input_format_for(input));
    names.insert(input_format_name(formats.back()));
  }
  const bool hold = !tokenizer.counts_without_encoding();
  HeldDocuments held;
  std::vector<std::int64_t> tokens;
  PrepareSummary counted;
  for (std::size_t i = 0; i < options.inputs.size(); ++i)
    counted.documents += each_document(i, formats[i], [&](std::string_view d) {
      counted.input_bytes += static_cast<std::int64_t>(d.size());
      if (!hold) {
        counted.tokens += (tokenizer.bos() ? 2 : 1) + tokenizer.count(d);
        return;
      }
      tokens.clear();
      tokenizer.encode_document(d, tokens);
      held.ids.insert(held.ids.end(), tokens.begin(), tokens.end());
      held.ends.push_back(static_cast<std::int64_t>(held.ids.size()));
      counted.tokens += static_cast<std::int64_t>(tokens.size());
    });

  StagedOutputs staged;  // the PII report, published just before the token file
  TokenFileWriter writer(options.output, tokenizer.dtype(), counted.tokens);
  TokenFileMetadata metadata = tokenizer.metadata();
  metadata.preparation.format = names.size() == 1 ? *names.begin() : "mixed";
  if (transformed) {
    metadata.pii =
        stage_pii_outputs(options.pii, transformed->table, nullptr, options.output, staged);
    counted.pii = pii_summary(transformed->table, metadata.pii);
    counted.pii_warning = detect_warning(transformed->table);
  }
  if (hold) {
    for (std::size_t doc = 0; doc + 1 < held.ends.size(); ++doc) {
      tokens.assign(held.ids.begin() + held.ends[doc], held.ids.begin() + held.ends[doc + 1]);
      writer.append(tokens.data(), static_cast<std::int64_t>(tokens.size()));
      writer.end_document();
    }
    staged.publish();
    writer.commit(metadata);
    return counted;
  }

  PrepareSummary written;
  written.pii = counted.pii;
  written.pii_warning = counted.pii_warning;
  for (std::size_t i = 0; i < options.inputs.size(); ++i)
    written.documents += each_document(i, formats[i], [&](std::string_view d) {
      tokens.clear();
      tokenizer.encode_document(d, tokens);
      // Stop before the writer sees more than pass one counted.
      if (written.tokens + static_cast<std::int64_t>(tokens.size()) > counted.tokens)
        throw DataError("data", "input " + options.inputs[i] + " changed while being read",
                        "run nss_prepare_data again on inputs that are not being written");
      written.input_bytes += static_cast<std::int64_t>(d.size());
      writer.append(tokens.data(), static_cast<std::int64_t>(tokens.size()));
      writer.end_document();
      written.tokens += static_cast<std::int64_t>(tokens.size());
    });
  if (written.tokens != counted.tokens || written.documents != counted.documents)
    throw DataError("data", "the inputs changed while being read",
                    "run nss_prepare_data again on inputs that are not being written");
  staged.publish();
  writer.commit(metadata);
  return written;
}

// One example as BOS prompt completion EOS; the completion and EOS are targets.
struct EncodedExample {
  std::vector<std::int64_t> tokens;
  std::vector<std::uint8_t> mask;
};

EncodedExample encode_example(const Example& example, const DocumentTokenizer& tokenizer,
                              std::optional<std::int64_t> max_tokens) {
  EncodedExample out;
  if (tokenizer.bos()) out.tokens.push_back(*tokenizer.bos());
  tokenizer.encode(example.prompt, out.tokens);
  out.mask.assign(out.tokens.size(), 0);
  tokenizer.encode(example.completion, out.tokens);
  out.tokens.push_back(tokenizer.eos());
  out.mask.resize(out.tokens.size(), 1);
  if (max_tokens && static_cast<std::int64_t>(out.tokens.size()) > *max_tokens) {
    out.tokens.resize(static_cast<std::size_t>(*max_tokens));
    out.mask.resize(static_cast<std::size_t>(*max_tokens));
  }
  return out;
}

// The encoded examples of a set and their counts.
struct EncodedSet {
  std::vector<EncodedExample> kept;
  PrepareSummary summary;
};

EncodedSet encode_examples(const ExampleSet& set, const DocumentTokenizer& tokenizer,
                           std::optional<std::int64_t> max_tokens) {
  EncodedSet out;
  PrepareSummary& summary = out.summary;
  for (const Example& example : set.examples) {
    EncodedExample encoded = encode_example(example, tokenizer, max_tokens);
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
    out.kept.push_back(std::move(encoded));
  }
  if (out.kept.empty())
    throw DataError("data",
                    "no example keeps a target token: all " +
                        std::to_string(summary.dropped_examples) +
                        " completions lie beyond --max-tokens",
                    "raise --max-tokens or shorten the prompts");
  summary.documents = static_cast<std::int64_t>(out.kept.size());
  return out;
}

// The examples of `set` in a token file at `output`, written but not yet
// committed (commit_examples).
std::unique_ptr<TokenFileWriter> written_examples(const std::string& output, const EncodedSet& set,
                                                  const DocumentTokenizer& tokenizer) {
  auto writer = std::make_unique<TokenFileWriter>(output, tokenizer.dtype(), set.summary.tokens,
                                                  /*with_loss_mask=*/true);
  for (const EncodedExample& example : set.kept) {
    writer->append(example.tokens.data(), static_cast<std::int64_t>(example.tokens.size()),
                   example.mask.data());
    writer->end_document();
  }
  return writer;
}

void commit_examples(TokenFileWriter& writer, const EncodedSet& set, TokenFileMetadata metadata) {
  metadata.dropped_examples = set.summary.dropped_examples;
  writer.commit(std::move(metadata));
}

PrepareSummary prepare_sft(const PrepareOptions& options, const DocumentTokenizer& tokenizer) {
  ExampleSet set;
  for (const auto& input : options.inputs) {
    ExampleSet more = read_sft_examples(input);
    set.preparation = more.preparation;
    for (auto& example : more.examples) set.examples.push_back(std::move(example));
  }
  const EncodedSet encoded = encode_examples(set, tokenizer, options.max_tokens);
  TokenFileMetadata metadata = tokenizer.metadata();
  metadata.preparation = set.preparation;
  commit_examples(*written_examples(options.output, encoded, tokenizer), encoded,
                  std::move(metadata));
  return encoded.summary;
}

// Records: the holdout (when asked for) is set aside and PII handled before
// anything is tokenised; every file is written in full before the first is
// published, the training token file, which names the others, last.
PrepareSummary prepare_records(const PrepareOptions& options, const DocumentTokenizer& tokenizer) {
  const std::string& source = options.inputs.front();
  RecordsTable table = read_records_table(source);
  HoldoutRecord record = source_record(source);
  RecordsSplit split = split_records(std::move(table), options.records.group_by, options.holdout);
  const bool has_holdout = !split.holdout.rows.empty();
  std::optional<TransformedTable> pii;
  if (const auto mode = pii_mode(options))
    pii = transform_table(options.pii, *mode, record, split.training,
                          has_holdout ? &split.holdout : nullptr, split.split.held_out,
                          options.output);
  const ExampleSet training = record_examples(split.training, options.records);
  const EncodedSet encoded = encode_examples(training, tokenizer, options.max_tokens);
  std::optional<EncodedSet> held;
  if (has_holdout && options.holdout_eval) {
    ExampleSet holdout = record_examples(split.holdout, options.records);
    holdout.preparation.records_schema = training.preparation.records_schema;
    held = encode_examples(holdout, tokenizer, options.max_tokens);
  }
  TokenFileMetadata metadata = tokenizer.metadata();
  metadata.preparation = training.preparation;
  PrepareSummary summary = encoded.summary;
  summary.holdout_target = split.split.target;
  summary.warning = split.split.warning;
  StagedOutputs staged;  // the files the token files name, published just before them
  if (pii) {
    metadata.pii = stage_pii_outputs(options.pii, *pii, &split.training, options.output, staged);
    summary.pii = pii_summary(*pii, metadata.pii);
    summary.pii_warning = detect_warning(*pii);
  }
  if (has_holdout) {
    stage_holdout_table(split, options.holdout, options.output, record, staged);
    summary.holdout_rows = split.split.rows;
    summary.holdout_groups = split.split.groups;
    summary.holdout_table = record.holdout_table;
  }
  metadata.holdout = record;
  std::unique_ptr<TokenFileWriter> held_writer;
  if (held) {
    summary.holdout_tokens = holdout_tokens_path(options.output);
    held_writer = written_examples(summary.holdout_tokens, *held, tokenizer);
  }
  const auto writer = written_examples(options.output, encoded, tokenizer);
  staged.publish();
  if (held_writer) {
    TokenFileMetadata held_metadata = metadata;
    held_metadata.holdout.split = "holdout";
    commit_examples(*held_writer, *held, std::move(held_metadata));
  }
  commit_examples(*writer, encoded, std::move(metadata));
  return summary;
}

}  // namespace

PrepareSummary prepare_dataset(const PrepareOptions& options, PreparedTokenizer* used) {
  check_options(options);
  const auto tokenizer = options.tokenizer.path.empty() ? make_byte_level_tokenizer()
                                                        : make_json_tokenizer(options.tokenizer);
  if (used) {
    used->name = tokenizer->metadata().tokenizer;
    used->vocab_size = *tokenizer->metadata().vocab_size;
  }
  if (options.format == InputFormat::kRecords) return prepare_records(options, *tokenizer);
  if (options.format && is_example_format(*options.format)) return prepare_sft(options, *tokenizer);
  return prepare_documents(options, *tokenizer);
}

}  // namespace nss::data
