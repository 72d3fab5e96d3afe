#include "train/sharded_llama.h"

#include <torch/torch.h>

#include "comm/agreement.h"
#include "model/initial_weights.h"
#include "model/llama_functional.h"
#include "model/param_spec.h"
#include "model/unit_layouts.h"
#include "train/compute_device.h"

namespace nss::train {

ShardedLlama::ShardedLlama(const config::ModelConfig& model, const config::LoraConfig& lora,
                           bool decay_embeddings, fsdp::ShardComms comms, const plan::RunPlan& plan,
                           const torch::Device& device, std::int64_t max_positions)
    : model_(model),
      lora_(lora),
      comms_(comms),
      plan_(plan),
      layers_(model, max_positions, device) {
  fsdp::ShardOptions options = shard_options(plan_, device);
  options.double_quant = lora_.double_quant;
  const int units = model::num_units(model_);
  for (int u = 0; u < units; ++u)
    units_.push_back(std::make_unique<fsdp::ShardedUnit>(
        model::unit_label(u, units),
        model::unit_layout(model_, lora_, decay_embeddings, u, comms_.shard->size()), comms_,
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
    return model::embedding_forward(tokens, p[0], layers_.architecture());
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
                                        plan_.loss_chunk_tokens);
      });
}

std::unique_ptr<ShardedLlama> ShardedLlama::from_config(const config::Config& config,
                                                        const plan::RunPlan& plan,
                                                        fsdp::ShardComms comms,
                                                        const torch::Device& device) {
  return std::make_unique<ShardedLlama>(config.model, config.training.lora,
                                        config.training.weight_decay_embeddings, comms, plan,
                                        device, config.data.seq_len);
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
  initialize(
      [&](const layout::FlatParam& param, std::int64_t offset, std::int64_t count, float* out) {
        for (const auto& unit_specs : specs)
          for (const auto& spec : unit_specs)
            if (spec.name == param.name) return weights.fill(spec, offset, count, out);
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
