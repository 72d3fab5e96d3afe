// Validation on the held-out set (eval.path): the dataset is opened and
// checked once, when training starts; every eval.interval_steps (and after
// the last step) the mean loss over the target tokens of eval.batches in-order global
// batches, each rank scoring its rows of every batch in micro-batch sized
// pieces, so the result is the same at any world size.
#pragma once

#include <cstdint>
#include <memory>

#include <torch/types.h>

#include "comm/communicator.h"
#include "config/config.h"
#include "data/dataset_checks.h"
#include "data/sequential_reader.h"
#include "train/sharded_llama.h"

namespace nss::train {

class Validation {
 public:
  /// DataError (exit 4) when eval.path does not hold eval.batches global
  /// batches of the model's vocabulary with at least one target token
  /// (collective: the ranks add up their target tokens).
  /// `tokenizer`: the model's (data::model_tokenizer), which eval.path must be made with.
  Validation(const config::Config& config, comm::Communicator& comm, torch::Device device,
             const data::ModelTokenizer& tokenizer);

  /// True when step `step` ends with a validation.
  bool due(std::int64_t step) const;

  /// The mean loss of `model` over the held-out batches' target tokens (collective).
  double loss(ShardedLlama& model);

 private:
  const config::Config& config_;
  comm::Communicator& comm_;
  torch::Device device_;
  data::SequentialBatchReader reader_;
  std::int64_t target_tokens_ = 0;  // in all held-out batches, all ranks
};

}  // namespace nss::train
