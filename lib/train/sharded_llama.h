// The Llama model as FSDP units: unit 0 the embedding, units 1..L the decoder
// blocks, unit L+1 the final norm and the head, which computes the loss (the
// B x S x vocab logits never cross a unit boundary). With tied embeddings
// the head unit gathers the embedding unit's shard as well.
#pragma once

#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include <torch/types.h>

#include "comm/communicator.h"
#include "config/config.h"
#include "fsdp/sharded_unit.h"
#include "model/layer_plan.h"
#include "model/llama_functional.h"
#include "model/lora_dropout.h"
#include "optim/grad_clip.h"
#include "plan/run_plan.h"

namespace nss::model {
class InitialWeights;
}

namespace nss::train {

/// The tensor-parallel groups the model computes over (parallel.tensor_parallel_size
/// > 1): the tensor group, and the ranks sharing a key/value head when the
/// tensor ranks exceed the key/value heads (else nullptr).
struct TensorComms {
  comm::Communicator* tensor = nullptr;
  comm::Communicator* key_value = nullptr;
};

/// What the LoRA dropout of one micro-batch is keyed by.
struct MicroBatchRandomness {
  std::uint64_t seed = 0;
  std::int64_t step = 0;
  std::vector<std::int64_t> sample_ids;  // global sample index of each row
};

class ShardedLlama {
 public:
  /// The units of `model` (with `lora`'s adapters) as `plan` shards and
  /// computes them on `device` (train::shard_options), the head's loss
  /// chunked and packed rows attending as it says; RoPE tables for
  /// `max_positions`.
  /// With plan.tensor_ranks > 1 each unit holds this tensor rank's parts
  /// (arch/tensor_parallel.h) and computes over `tensor`.
  ShardedLlama(const config::ModelConfig& model, const config::LoraConfig& lora,
               bool decay_embeddings, fsdp::ShardComms comms, const plan::RunPlan& plan,
               const torch::Device& device, std::int64_t max_positions, TensorComms tensor = {});

  /// The run's model: `config`'s model, adapters and embedding decay, RoPE
  /// tables for data.seq_len; for the trainer and the preflight's synthetic
  /// step alike.
  static std::unique_ptr<ShardedLlama> from_config(const config::Config& config,
                                                   const plan::RunPlan& plan,
                                                   fsdp::ShardComms comms,
                                                   const torch::Device& device,
                                                   TensorComms tensor = {});

  /// Fills every shard from initialisation or pretrained files (only the
  /// ranges this rank owns are produced or read).
  void initialize(const model::InitialWeights& weights);
  /// Fills every shard from `filler` (the preflight's synthetic weights).
  void initialize(const fsdp::ParamFiller& filler);

  /// sum_t weights_t * CE_t over the micro-batch (float32 `weights` [B, S],
  /// head_loss_forward), connected through autograd to the unit masters.
  /// `randomness` nullptr: no dropout (eval). The unit recompute in backward
  /// reuses this micro-batch's targets, weights and randomness, so call
  /// backward before the next loss().
  /// `documents`: packed rows (model::document_mask), nullptr for windows.
  torch::Tensor loss(const torch::Tensor& inputs, const torch::Tensor& targets,
                     const torch::Tensor& weights, const MicroBatchRandomness* randomness,
                     const model::DocumentMask* documents = nullptr);

  std::vector<std::unique_ptr<fsdp::ShardedUnit>>& units() { return units_; }
  /// Frees gathers started early that no unit took (ShardOptions::prefetch)
  /// and returns when the units' collectives have finished (Communicator::finish_all).
  void finish_collectives();
  const config::ModelConfig& model() const { return model_; }
  const config::LoraConfig& lora() const { return lora_; }
  const fsdp::ShardComms& comms() const { return comms_; }
  const plan::RunPlan& plan() const { return plan_; }
  /// The tensor-parallel plan and groups (nullptr at tensor_ranks 1).
  const model::TensorParallel* tensor_parallel() const {
    return tensor_plan_ ? &tensor_parallel_ : nullptr;
  }
  /// For each unit, the elements of this rank's trainable shard that other
  /// tensor ranks hold copies of (whole tensors, replicated key/value heads):
  /// a gradient norm counts each of their squares 1 / copies times.
  const std::vector<std::vector<optim::SharedElements>>& shared_gradient_elements() const {
    return shared_gradient_elements_;
  }
  /// For each unit, 1 / (the tensor ranks holding the same values) per
  /// trainable parameter in layout order: how DP-SGD's per-example norms,
  /// summed over the tensor group, count each part (empty without tensor
  /// parallelism).
  std::unordered_map<const fsdp::ShardedUnit*, std::vector<double>> per_example_norm_weights()
      const;

 private:
  std::vector<std::vector<optim::SharedElements>> find_shared_gradient_elements() const;

  config::ModelConfig model_;
  config::LoraConfig lora_;
  fsdp::ShardComms comms_;
  plan::RunPlan plan_;
  std::optional<arch::TensorParallelPlan> tensor_plan_;  // tensor_ranks > 1
  model::TensorParallel tensor_parallel_;
  model::LayerPlans layers_;  // each layer's RoPE table and attention window
  std::vector<std::unique_ptr<fsdp::ShardedUnit>> units_;
  std::vector<fsdp::UnitCompute> computes_;
  std::vector<std::vector<optim::SharedElements>> shared_gradient_elements_;

  // The micro-batch in flight (read by the unit computes, also during recompute).
  torch::Tensor targets_;
  torch::Tensor weights_;
  std::optional<model::DocumentMask> documents_;
  std::vector<model::DropoutKey> dropout_keys_;  // per decoder block; empty: no dropout
};

}  // namespace nss::train
