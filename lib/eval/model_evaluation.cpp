#include "eval/model_evaluation.h"

#include <optional>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include "checkpoint/committed_step.h"
#include "core/error.h"
#include "data/dataset_checks.h"
#include "data/token_dataset.h"
#include "eval/inference_model.h"

namespace nss::eval {

EvalResult evaluate(const model::LlamaModel& model, const data::SequentialBatchReader& reader) {
  torch::NoGradGuard no_grad;
  double loss_sum = 0;
  std::int64_t tokens = 0;
  for (std::int64_t k = 0; k < reader.num_batches(); ++k) {
    data::TokenBatch batch = reader.batch(k);
    const torch::Tensor windows =
        torch::from_blob(batch.tokens.data(), {batch.rows, batch.row_length()}, torch::kInt64);
    const torch::Tensor inputs = windows.narrow(1, 0, batch.seq_len);
    const torch::Tensor targets = windows.narrow(1, 1, batch.seq_len);
    const torch::Tensor mask =
        torch::from_blob(batch.target_mask.data(), {batch.rows, batch.seq_len}, torch::kUInt8)
            .to(torch::kFloat32);
    std::optional<model::DocumentMask> documents;
    if (!batch.positions.empty()) {
      const auto rows_of = [&](std::vector<std::int64_t>& values) {
        return torch::from_blob(values.data(), {batch.rows, batch.seq_len}, torch::kInt64);
      };
      documents = model::document_mask(rows_of(batch.positions), rows_of(batch.segments));
    }
    loss_sum +=
        model.weighted_loss(inputs, targets, mask, nullptr, documents ? &*documents : nullptr)
            .item<double>();
    tokens += batch.target_tokens();
  }
  if (tokens == 0)
    throw DataError("eval",
                    "the batches evaluated hold no target token (their /loss_mask is all 0)",
                    "evaluate a dataset with answers, or more --batches");
  return {loss_sum / static_cast<double>(tokens), tokens};
}

EvalResult run_evaluation(const EvalOptions& options) {
  if (options.seq_len <= 0 || options.batches <= 0 || options.batch_size <= 0)
    throw UsageError("eval", "--seq-len, --batches and --batch-size must be positive, got " +
                                 std::to_string(options.seq_len) + ", " +
                                 std::to_string(options.batches) + ", " +
                                 std::to_string(options.batch_size));
  const InferenceModel loaded = load_inference_model(options.model, torch::kFloat32);
  const model::LlamaModel& model = loaded.model;
  const auto& shape = model.config();
  if (options.seq_len > shape.max_position_embeddings)
    throw UsageError("eval",
                     "--seq-len " + std::to_string(options.seq_len) +
                         " exceeds the model's max_position_embeddings (" +
                         std::to_string(shape.max_position_embeddings) + ")",
                     "choose a shorter --seq-len");

  const auto dataset = data::TokenDataset::open(options.data_path);
  const data::SequentialBatchReader reader(dataset, options.seq_len, options.batch_size,
                                           options.batches, 0, 1, options.packing,
                                           options.long_documents);
  // A step's or an adapter's tokenizer is its pretrained base's.
  data::check_dataset_vocabulary(
      *dataset, {options.seq_len, options.batches * options.batch_size, shape.vocab_size,
                 data::model_tokenizer(loaded.pretrained_dir)});
  spdlog::info("[eval] {} ({} layers, hidden {}) on {}: {} batches x {} windows of {} tokens",
               options.model.path, shape.num_hidden_layers, shape.hidden_size, options.data_path,
               options.batches, options.batch_size, options.seq_len + 1);
  return evaluate(model, reader);
}

std::string eval_result_json(const EvalResult& result) {
  return nlohmann::json{{"loss", result.loss}, {"tokens", result.tokens}}.dump();
}

}  // namespace nss::eval
