#include "train/sharded_llama.h"

#include <algorithm>

#include <torch/torch.h>

#include "comm/agreement.h"
#include "core/error.h"
#include "model/initial_weights.h"
#include "model/llama_functional.h"
#include "model/param_spec.h"
#include "model/tensor_parallel_params.h"
#include "model/unit_layouts.h"
#include "train/compute_device.h"

namespace nss::train {

ShardedLlama::ShardedLlama(const config::ModelConfig& model, const config::LoraConfig& lora,
                           bool decay_embeddings, fsdp::ShardComms comms, const plan::RunPlan& plan,
                           const torch::Device& device, std::int64_t max_positions,
                           TensorComms tensor)
    : model_(model),
      lora_(lora),
      comms_(comms),
      plan_(plan),
      layers_(model, max_positions, device) {
  if (plan_.tensor_ranks > 1) {
    NSS_ASSERT(tensor.tensor && tensor.tensor->size() == plan_.tensor_ranks, "train",
               "tensor parallelism needs its tensor group's communicator");
    tensor_plan_ = arch::tensor_parallel_plan(layers_.architecture(), model_, plan_.tensor_ranks);
    tensor_parallel_ = {tensor.tensor, tensor.key_value, &*tensor_plan_, plan_.sequence_parallel};
    layers_.set_tensor_parallel(&tensor_parallel_);
  }
  fsdp::ShardOptions options = shard_options(plan_, device);
  options.double_quant = lora_.double_quant;
  const int units = model::num_units(model_);
  const arch::TensorParallelPlan* parts = tensor_plan_ ? &*tensor_plan_ : nullptr;
  for (int u = 0; u < units; ++u)
    units_.push_back(std::make_unique<fsdp::ShardedUnit>(
        model::unit_label(u, units),
        model::unit_layout(model_, lora_, decay_embeddings, u, comms_.shard->size(), parts), comms_,
        options));
  const bool embedding_trains = units_[0]->layout().numel(true) > 0;
  const auto unit_at = [&](int u) {
    return u < 0 ? nullptr : units_[static_cast<std::size_t>(u)].get();
  };
  for (int u = 0; u < units; ++u)
    units_[static_cast<std::size_t>(u)]->set_prefetch_targets(
        unit_at(plan_.forward_prefetch(u, units)),
        unit_at(plan_.backward_prefetch(u, embedding_trains)));

  computes_.push_back([this](const torch::Tensor& tokens, const std::vector<torch::Tensor>& p,
                             fsdp::KeptSegments*) {
    return model::embedding_forward(tokens, p[0], layers_.architecture(), tensor_parallel());
  });
  // A block's attention is the segment selective recompute keeps.
  for (int layer = 0; layer < model_.num_hidden_layers; ++layer) {
    computes_.push_back([this, layer](const torch::Tensor& x, const std::vector<torch::Tensor>& p,
                                      fsdp::KeptSegments* kept) {
      const model::DropoutKey* key =
          dropout_keys_.empty() ? nullptr : &dropout_keys_[static_cast<std::size_t>(layer)];
      const model::DocumentMask* documents = documents_ ? &*documents_ : nullptr;
      const model::LayerPlan plan = layers_[layer];
      const model::BlockAttention attend = model::block_attention(model_, documents, plan);
      return model::decoder_block_forward(
          x, p, model_, lora_, plan, key, documents ? documents->positions : torch::Tensor(),
          [&](const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v) {
            return fsdp::run_segment(kept, {q, k, v}, [&](const std::vector<torch::Tensor>& in) {
              return attend(in[0], in[1], in[2]);
            });
          });
    });
  }
  // Head parameters: [model.norm.weight, lm_head.weight], or with tied
  // embeddings [model.norm.weight] followed by the embedding unit's weight.
  computes_.push_back(
      [this](const torch::Tensor& x, const std::vector<torch::Tensor>& p, fsdp::KeptSegments*) {
        return model::head_loss_forward(x, p[0], p[1], targets_, weights_, model_,
                                        plan_.loss_chunk_tokens, tensor_parallel());
      });
  shared_gradient_elements_ = find_shared_gradient_elements();
}

std::unique_ptr<ShardedLlama> ShardedLlama::from_config(const config::Config& config,
                                                        const plan::RunPlan& plan,
                                                        fsdp::ShardComms comms,
                                                        const torch::Device& device,
                                                        TensorComms tensor) {
  return std::make_unique<ShardedLlama>(config.model, config.training.lora,
                                        config.training.weight_decay_embeddings, comms, plan,
                                        device, config.data.seq_len, tensor);
}

namespace {

// How many tensor ranks hold the values of each of unit `unit`'s parameters
// (unit_parameters order).
std::vector<int> parameter_copies(const arch::TensorParallelPlan& plan,
                                  const config::ModelConfig& model, const config::LoraConfig& lora,
                                  int unit) {
  std::vector<int> copies;
  for (const auto& spec : model::unit_parameters(model, lora, unit))
    copies.push_back(model::tensor_copies(plan, model::parameter_placement(plan, spec)));
  return copies;
}

}  // namespace

std::vector<std::vector<optim::SharedElements>> ShardedLlama::find_shared_gradient_elements()
    const {
  std::vector<std::vector<optim::SharedElements>> shared(units_.size());
  if (!tensor_plan_) return shared;
  for (std::size_t u = 0; u < units_.size(); ++u) {
    const std::vector<int> copies =
        parameter_copies(*tensor_plan_, model_, lora_, static_cast<int>(u));
    for (const auto& piece : units_[u]->layout().shard_pieces(true, units_[u]->comm().rank()))
      if (copies[piece.param] > 1)
        shared[u].push_back(
            {piece.shard_offset, piece.shard_offset + piece.length, copies[piece.param]});
  }
  return shared;
}

std::unordered_map<const fsdp::ShardedUnit*, std::vector<double>>
ShardedLlama::per_example_norm_weights() const {
  std::unordered_map<const fsdp::ShardedUnit*, std::vector<double>> weights;
  if (!tensor_plan_) return weights;
  for (std::size_t u = 0; u < units_.size(); ++u) {
    const std::vector<int> copies =
        parameter_copies(*tensor_plan_, model_, lora_, static_cast<int>(u));
    const auto& params = units_[u]->layout().params();
    std::vector<double>& unit = weights[units_[u].get()];
    for (std::size_t i = 0; i < params.size(); ++i)
      if (params[i].trainable) unit.push_back(1.0 / copies[i]);
  }
  return weights;
}

void ShardedLlama::finish_collectives() {
  for (auto& unit : units_) unit->drop_prefetched();
  comms_.shard->finish_all();
  if (comms_.replicated()) comms_.replicate->finish_all();
}

void ShardedLlama::initialize(const model::InitialWeights& weights) {
  const int units = static_cast<int>(units_.size());
  std::vector<std::vector<model::ParamSpec>> specs;
  for (int u = 0; u < units; ++u) specs.push_back(model::unit_parameters(model_, lora_, u));
  const auto fill = [&](const model::ParamSpec& spec, std::int64_t offset, std::int64_t count,
                        float* out) {
    if (!tensor_plan_) return weights.fill(spec, offset, count, out);
    // This tensor rank's part: its runs of the whole tensor's elements; the
    // vocabulary's padding rows stay zero.
    std::fill(out, out + count, 0.0F);
    model::for_each_whole_run(*tensor_plan_, model::parameter_placement(*tensor_plan_, spec),
                              spec.shape, tensor_parallel_.rank(), offset, count,
                              [&](std::int64_t whole, std::int64_t length, std::int64_t part) {
                                weights.fill(spec, whole, length, out + (part - offset));
                              });
  };
  initialize(
      [&](const layout::FlatParam& param, std::int64_t offset, std::int64_t count, float* out) {
        for (const auto& unit_specs : specs)
          for (const auto& spec : unit_specs)
            if (spec.name == param.name) return fill(spec, offset, count, out);
      });
}

void ShardedLlama::initialize(const fsdp::ParamFiller& filler) {
  // Filling is local and may fail on one rank (a damaged slice of a
  // pretrained file); the NF4 base's double quantisation then needs every
  // rank's block scales. Agreeing in between keeps a rank from waiting alone
  // in that all-gather: every rank leaves with the failing rank's error.
  // (On the host communicator: the shard group's may be NCCL, on device memory.)
  comm::run_on_all(*comms_.host, [&] {
    for (auto& unit : units_) unit->fill(filler);
  });
  for (auto& unit : units_) unit->complete_fill();
}

torch::Tensor ShardedLlama::loss(const torch::Tensor& inputs, const torch::Tensor& targets,
                                 const torch::Tensor& weights,
                                 const MicroBatchRandomness* randomness,
                                 const model::DocumentMask* documents) {
  targets_ = targets;
  weights_ = weights;
  documents_.reset();
  if (documents) documents_ = *documents;
  dropout_keys_.clear();
  if (randomness && lora_.enabled && lora_.dropout > 0) {
    for (std::int64_t layer = 0; layer < model_.num_hidden_layers; ++layer)
      dropout_keys_.push_back({randomness->seed, randomness->step, randomness->sample_ids, layer});
  }
  const std::size_t last = units_.size() - 1;
  torch::Tensor hidden = units_[0]->apply(inputs, computes_[0]);
  for (std::size_t u = 1; u < last; ++u) hidden = units_[u]->apply(hidden, computes_[u]);
  fsdp::ShardedUnit* tied = model_.tie_word_embeddings ? units_[0].get() : nullptr;
  return units_[last]->apply(hidden, computes_[last], tied);
}

}  // namespace nss::train
