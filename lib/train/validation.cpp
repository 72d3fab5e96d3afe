#include "train/validation.h"

#include <algorithm>

#include <torch/torch.h>

#include "config/derived.h"
#include "core/error.h"
#include "data/dataset_checks.h"
#include "data/token_dataset.h"
#include "train/training_step.h"

namespace nss::train {
namespace {

std::shared_ptr<const data::TokenDataset> checked_eval_dataset(
    const config::Config& config, const data::ModelTokenizer& tokenizer) {
  auto dataset = data::TokenDataset::open(config.eval.path);
  data::check_dataset(*dataset, data::validation_requirements(config, tokenizer));
  return dataset;
}

}  // namespace

Validation::Validation(const config::Config& config, comm::Communicator& comm, torch::Device device,
                       const data::ModelTokenizer& tokenizer)
    : config_(config),
      comm_(comm),
      device_(device),
      reader_(checked_eval_dataset(config, tokenizer), config.data.seq_len,
              config.training.global_batch_size, config.eval.batches,
              config::data_parallel_rank(config, comm.rank()),
              config::data_parallel_ranks(config, comm.size()), config.data.packing,
              config.data.long_documents) {
  for (std::int64_t k = 0; k < reader_.num_batches(); ++k)
    target_tokens_ += reader_.batch(k).target_tokens();
  {
    comm::CollectiveLabel label(comm_, "validation target tokens");
    comm_.all_reduce(&target_tokens_, 1, comm::ReduceOp::kSum);
  }
  if (target_tokens_ == 0)
    throw DataError("eval",
                    "the " + std::to_string(config.eval.batches) +
                        " held-out batches of eval.path " + config.eval.path +
                        " hold no target token (their /loss_mask is all 0)",
                    "prepare the held-out set with answers (docs/data.md), or raise eval.batches");
}

bool Validation::due(std::int64_t step) const {
  const std::int64_t interval = config_.eval.interval_steps;
  return interval > 0 && (step % interval == 0 || step == config_.training.max_steps);
}

double Validation::loss(ShardedLlama& model) {
  const std::int64_t micro = config_.training.micro_batch_size;
  torch::NoGradGuard no_grad;
  double total = 0;
  for (std::int64_t k = 0; k < reader_.num_batches(); ++k) {
    const data::TokenBatch batch = reader_.batch(k);
    // Micro-batch sized pieces keep evaluation within the training footprint.
    for (std::int64_t row = 0; row < batch.rows; row += micro) {
      const data::TokenBatch piece = batch.slice(row, std::min(micro, batch.rows - row));
      const MicroBatchTensors t = on_device(micro_batch_tensors(piece, 0, 0), device_);
      const auto documents = document_mask_of(t, model.plan().packed_attention);
      total +=
          model.loss(t.inputs, t.targets, t.target_mask, nullptr, documents ? &*documents : nullptr)
              .item<double>();
    }
  }
  model.finish_collectives();
  comm::CollectiveLabel label(comm_, "validation loss");
  comm_.all_reduce(&total, 1, comm::ReduceOp::kSum);
  return total / static_cast<double>(target_tokens_);
}

}  // namespace nss::train
