#include "data/dataset_checks.h"

#include <filesystem>
#include <optional>
#include <string>

#include "config/derived.h"
#include "core/error.h"
#include "core/sha256.h"
#include "data/packed_source.h"

namespace nss::data {
namespace {

// Where the range's offending end comes from, for the messages.
std::string scan_text(const TokenDataset& dataset, const TokenIdRange& range, std::int64_t id,
                      std::int64_t at) {
  return "a sampled scan of " + std::to_string(range.scanned_tokens) + " of its " +
         std::to_string(dataset.num_tokens()) + " tokens found id " + std::to_string(id) +
         " at token " + std::to_string(at);
}

// The packed view of `dataset` under `needs` (the caller keeps `dataset`).
PackedSource packed_view(const TokenDataset& dataset, const DatasetRequirements& needs) {
  return PackedSource(
      std::shared_ptr<const TokenDataset>(&dataset, [](const TokenDataset*) {}),
      {needs.seq_len, needs.packing, needs.long_documents, needs.shuffle, needs.seed});
}

std::string packing_text(const DatasetRequirements& needs) {
  return std::string("data.packing ") + config::choice_name(needs.packing) +
         ", data.long_documents " + config::choice_name(needs.long_documents);
}

}  // namespace

std::int64_t num_windows(std::int64_t num_tokens, std::int64_t seq_len) {
  NSS_ASSERT(seq_len > 0, "data", "seq_len must be positive");
  return num_tokens < 1 ? 0 : (num_tokens - 1) / seq_len;
}

std::int64_t tokens_for_windows(std::int64_t windows, std::int64_t seq_len) {
  return windows * seq_len + 1;
}

DatasetRequirements training_requirements(const config::Config& config,
                                          const ModelTokenizer& tokenizer) {
  DatasetRequirements needs{config.data.seq_len, config.training.global_batch_size,
                            config.model.vocab_size, tokenizer};
  if (config::poisson_batches(config)) needs.min_samples = 1;
  needs.packing = config.data.packing;
  needs.long_documents = config.data.long_documents;
  needs.seed = static_cast<std::uint64_t>(config.run.seed);
  return needs;
}

DatasetRequirements validation_requirements(const config::Config& config,
                                            const ModelTokenizer& tokenizer) {
  DatasetRequirements needs = training_requirements(config, tokenizer);
  needs.min_samples = config.training.global_batch_size * config.eval.batches;
  needs.purpose =
      "validation (eval.batches = " + std::to_string(config.eval.batches) + " global batches)";
  needs.shorten_hint =
      "prepare a longer validation file, or lower eval.batches or training.global_batch_size";
  needs.batch_setting = "eval.batches x training.global_batch_size";
  needs.shuffle = false;
  return needs;
}

std::int64_t available_samples(const TokenDataset& dataset, const DatasetRequirements& needs) {
  if (needs.packing == config::Packing::kWindows)
    return num_windows(dataset.num_tokens(), needs.seq_len);
  return packed_view(dataset, needs).samples_in_epoch(0);
}

void check_dataset_length(const TokenDataset& dataset, const DatasetRequirements& needs) {
  if (needs.packing != config::Packing::kWindows) {
    const std::int64_t rows = available_samples(dataset, needs);
    if (rows >= needs.min_samples) return;
    throw DataError("data",
                    "token dataset " + dataset.path() + " is too short: its " +
                        std::to_string(dataset.num_documents()) + " documents make " +
                        std::to_string(rows) +
                        " rows of seq_len+1 = " + std::to_string(needs.seq_len + 1) + " tokens (" +
                        packing_text(needs) + "), but " + needs.purpose + " needs " +
                        std::to_string(needs.min_samples) + " rows",
                    "prepare more examples, or lower " + needs.batch_setting + " to at most " +
                        std::to_string(rows) +
                        (needs.packing == config::Packing::kDocuments
                             ? "; data.packing: none puts one document in each row (more rows)"
                             : ""));
  }
  const std::int64_t windows = num_windows(dataset.num_tokens(), needs.seq_len);
  if (windows >= needs.min_samples) return;
  throw DataError(
      "data",
      "token dataset " + dataset.path() + " is too short: " + std::to_string(dataset.num_tokens()) +
          " tokens make " + std::to_string(windows) +
          " windows of seq_len+1 = " + std::to_string(needs.seq_len + 1) + " tokens, but " +
          needs.purpose + " needs " + std::to_string(needs.min_samples) + " (" +
          std::to_string(tokens_for_windows(needs.min_samples, needs.seq_len)) + " tokens)",
      needs.shorten_hint);
}

KeptLabels check_targets_kept(const TokenDataset& dataset, const DatasetRequirements& needs) {
  if (!dataset.has_loss_mask() || needs.packing == config::Packing::kWindows) return {};
  const KeptLabels kept = packed_view(dataset, needs).kept_labels();
  if (kept.targets > 0) return kept;
  const bool truncated = needs.long_documents == config::LongDocuments::kTruncate;
  throw DataError(
      "data",
      "token dataset " + dataset.path() + ": none of the " + std::to_string(kept.labels) +
          " labels its rows keep is a target (" + packing_text(needs) + ")" +
          (truncated
               ? ": truncation keeps each document's first seq_len+1 = " +
                     std::to_string(needs.seq_len + 1) + " tokens, and the answers lie beyond them"
               : "") +
          ": nothing to learn",
      truncated ? "raise data.seq_len (the prompts are longer than a row), set "
                  "data.long_documents: split, or prepare the data with --max-tokens " +
                      std::to_string(needs.seq_len + 1) +
                      " (examples without an answer within it are dropped)"
                : "prepare the data with answers (docs/data.md, Instruction and record data)");
}

ModelTokenizer model_tokenizer(const std::string& model_dir) {
  if (model_dir.empty()) return {};
  const std::string path = model_dir + "/tokenizer.json";
  if (!std::filesystem::is_regular_file(path)) return {};
  return {path, sha256_file_hex(path)};
}

void check_dataset_tokenizer(const TokenDataset& dataset, const DatasetRequirements& needs) {
  const ModelTokenizer& model = needs.model_tokenizer;
  const TokenFileMetadata& made_with = dataset.metadata();
  if (model.path.empty() || made_with.tokenizer_sha256 == model.sha256) return;
  const std::string tokenizer =
      made_with.tokenizer.empty() ? "an unnamed tokenizer" : "tokenizer " + made_with.tokenizer;
  const std::string hash = made_with.tokenizer_sha256.empty()
                               ? "no tokenizer_sha256 attribute"
                               : "tokenizer_sha256 " + made_with.tokenizer_sha256;
  throw DataError("data",
                  "token dataset " + dataset.path() + " was made with " + tokenizer + " (" + hash +
                      "), not with the model's " + model.path + " (sha256 " + model.sha256 + ")",
                  "prepare the data with the model's tokenizer: scripts/prepare_data_hf.py "
                  "--tokenizer " +
                      model.path);
}

TokenIdRange check_dataset_vocabulary(const TokenDataset& dataset,
                                      const DatasetRequirements& needs) {
  check_dataset_tokenizer(dataset, needs);
  const TokenIdRange range = dataset.token_id_range();
  const std::string tokenizer = dataset.metadata().tokenizer.empty()
                                    ? ""
                                    : " (tokenizer " + dataset.metadata().tokenizer + ")";
  const std::string prepare = "prepare the data with the model's own tokenizer";
  if (range.min < 0)
    throw DataError("data",
                    "token dataset " + dataset.path() + tokenizer + " has negative token ids: " +
                        scan_text(dataset, range, range.min, range.min_at) +
                        ", but ids must lie in [0, model.vocab_size = " +
                        std::to_string(needs.model_vocab_size) + ")",
                    prepare + " (token ids index the vocabulary from 0)");
  if (range.max < needs.model_vocab_size) {
    dataset.limit_token_ids(needs.model_vocab_size);
    return range;
  }
  const std::optional<std::int64_t>& attribute = dataset.metadata().max_token_id;
  std::string source;
  if (range.max_from_attribute)
    source = "its max_token_id attribute says " + std::to_string(range.max);
  else if (attribute)
    source = scan_text(dataset, range, range.max, range.max_at) +
             " (its max_token_id attribute says " + std::to_string(*attribute) + ")";
  else
    source = "it has no max_token_id attribute and " +
             scan_text(dataset, range, range.max, range.max_at);
  throw DataError("data",
                  "token dataset " + dataset.path() + tokenizer +
                      " has ids beyond the model's vocabulary: " + source +
                      ", but model.vocab_size is " + std::to_string(needs.model_vocab_size),
                  "set model.vocab_size above " + std::to_string(range.max) + " or " + prepare);
}

void check_dataset(const TokenDataset& dataset, const DatasetRequirements& needs) {
  check_dataset_length(dataset, needs);
  check_dataset_vocabulary(dataset, needs);
}

}  // namespace nss::data
