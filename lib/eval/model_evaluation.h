// Scoring a model on a token dataset (nss_eval): the mean next-token
// cross-entropy over the target tokens of the dataset's first batches x
// batch_size samples, in order — windows (window i = tokens[i*seq_len,
// i*seq_len + seq_len + 1)) or packed rows of documents — in float32.
#pragma once

#include <cstdint>
#include <string>

#include "data/sequential_reader.h"
#include "eval/inference_model.h"
#include "model/llama_model.h"

namespace nss::eval {

struct EvalOptions {
  ModelSource model;      // --model, --base, --quantize, --double-quant
  std::string data_path;  // a token dataset (docs/data.md)
  std::int64_t seq_len = 128;
  std::int64_t batches = 4;
  std::int64_t batch_size = 2;
  config::Packing packing = config::Packing::kWindows;  // as data.packing
  config::LongDocuments long_documents = config::LongDocuments::kTruncate;
};

struct EvalResult {
  double loss = 0;          // mean over every scored token, in nats
  std::int64_t tokens = 0;  // scored (target) tokens
};

/// Scores every batch of `reader` with `model`, without gradients.
EvalResult evaluate(const model::LlamaModel& model, const data::SequentialBatchReader& reader);

/// Loads options.model_path and options.data_path, checks that they fit each
/// other and evaluates. Errors: UsageError (exit 2) for sizes that are not
/// positive or a seq_len beyond the model's max_position_embeddings;
/// DataError (exit 4) for a missing or malformed model directory or dataset,
/// a weight that is not finite, a dataset too short for the requested
/// windows, token ids beyond the model's vocabulary; CheckpointError (exit 5)
/// for a checkpoint step that is not committed or does not verify.
EvalResult run_evaluation(const EvalOptions& options);

/// The one JSON line nss_eval prints: {"loss": ..., "tokens": ...}.
std::string eval_result_json(const EvalResult& result);

}  // namespace nss::eval
