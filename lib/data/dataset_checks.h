// Checks that a token dataset can feed a given training or evaluation job.
// The preflight and the trainer call these; each failure is a DataError
// (exit 4) naming the file, the numbers and what to change.
#pragma once

#include <cstdint>
#include <string>

#include "config/config.h"
#include "data/packed_source.h"
#include "data/token_dataset.h"

namespace nss::data {

/// The tokenizer that ships with a model directory (its tokenizer.json).
struct ModelTokenizer {
  std::string path;    // DIR/tokenizer.json; empty: the model brings none
  std::string sha256;  // of that file
};

/// The tokenizer.json beside the weights of `model_dir`, if there is one (an
/// empty `model_dir` or a directory without it: none).
ModelTokenizer model_tokenizer(const std::string& model_dir);

/// What a job needs from its dataset.
struct DatasetRequirements {
  std::int64_t seq_len = 0;             // tokens per sequence (samples hold seq_len + 1)
  std::int64_t min_samples = 0;         // e.g. the global batch size
  std::int64_t model_vocab_size = 0;    // every id must be below it
  ModelTokenizer model_tokenizer = {};  // the tokens must come from it, if the model has one
  // What min_samples pays for and how to need less, for the "too short" error.
  std::string purpose = "one global batch";
  std::string shorten_hint =
      "prepare more text, or lower training.global_batch_size or data.seq_len";
  // The setting whose value is min_samples, for the hint of packed data.
  std::string batch_setting = "training.global_batch_size";
  // What a sample is (data.packing, data.long_documents): a window, or a row
  // of packed documents, counted in epoch 0's shuffled plan for training and
  // in file order for evaluation (shuffle false).
  config::Packing packing = config::Packing::kWindows;
  config::LongDocuments long_documents = config::LongDocuments::kTruncate;
  bool shuffle = true;
  std::uint64_t seed = 0;
};

/// Windows of seq_len + 1 tokens (overlapping by one) that `num_tokens` holds.
std::int64_t num_windows(std::int64_t num_tokens, std::int64_t seq_len);

/// Tokens needed for `windows` windows: windows * seq_len + 1.
std::int64_t tokens_for_windows(std::int64_t windows, std::int64_t seq_len);

/// What training needs of data.path: one global batch of samples as
/// data.packing makes them (epoch 0's shuffled plan). Under Poisson sampling
/// one example: the expected batch is checked against the examples where the
/// privacy plan is made (privacy::plan_privacy: q = B / n at most 1).
DatasetRequirements training_requirements(const config::Config& config,
                                          const ModelTokenizer& tokenizer);

/// What validation needs of eval.path: eval.batches global batches, in file order.
DatasetRequirements validation_requirements(const config::Config& config,
                                            const ModelTokenizer& tokenizer);

/// Samples the dataset offers the batch arithmetic under `needs`' packing:
/// windows, or the rows its documents pack into.
std::int64_t available_samples(const TokenDataset& dataset, const DatasetRequirements& needs);

/// Throws DataError when the dataset offers fewer than min_samples samples
/// (available_samples), naming what a sample is under its packing.
void check_dataset_length(const TokenDataset& dataset, const DatasetRequirements& needs);

/// The labels packing keeps (data/packed_source.h: a truncated document
/// loses its tail) and the targets of the file's /loss_mask among them;
/// throws DataError ("nothing to learn") when there is none. Files without a
/// /loss_mask, and windows, return {} unread.
KeptLabels check_targets_kept(const TokenDataset& dataset, const DatasetRequirements& needs);

/// Throws DataError when the model brings a tokenizer and the dataset was not
/// made with it (its tokenizer_sha256 attribute differs or is absent, as for
/// byte-level data): its ids would pass the vocabulary check and train nonsense.
void check_dataset_tokenizer(const TokenDataset& dataset, const DatasetRequirements& needs);

/// Throws DataError when the tokenizer check fails, or the ids reach
/// model_vocab_size (the max_token_id attribute, or a sampled scan without
/// it) or below 0 (a scan of signed /tokens); the message says which and
/// where. On success every later read of `dataset` checks its ids against
/// model_vocab_size (TokenDataset::limit_token_ids), so an id the attribute
/// or the scan missed is a DataError naming its position. Returns what it
/// compared.
TokenIdRange check_dataset_vocabulary(const TokenDataset& dataset,
                                      const DatasetRequirements& needs);

/// The length and vocabulary checks.
void check_dataset(const TokenDataset& dataset, const DatasetRequirements& needs);

}  // namespace nss::data
