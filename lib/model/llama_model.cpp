#include "model/llama_model.h"

#include <algorithm>

#include <torch/torch.h>

#include "core/error.h"
#include "hf/pretrained_directory.h"
#include "model/llama_functional.h"
#include "model/rotary_embedding.h"
#include "quant/nf4_storage.h"

namespace nss::model {
namespace {

// Loading goes through a float32 staging buffer of at most this many elements.
constexpr std::int64_t kLoadPieceElements = std::int64_t{1} << 22;

}  // namespace

LlamaModel::LlamaModel(const config::ModelConfig& model, const config::LoraConfig& lora,
                       torch::TensorOptions options)
    : model_(model), lora_(lora) {
  for (int unit = 0; unit < nss::model::num_units(model); ++unit) {
    specs_.push_back(unit_parameters(model, lora, unit));
    std::vector<torch::Tensor> tensors;
    for (const auto& spec : specs_.back())
      tensors.push_back(torch::empty(spec.shape, options).requires_grad_(spec.trainable));
    tensors_.push_back(std::move(tensors));
  }
}

BaseQuantization base_quantization(const config::LoraConfig& lora) {
  return {lora.enabled && lora.quantize_base == config::QuantizeBase::kNf4, lora.double_quant};
}

void LlamaModel::load(const InitialWeights& weights, const BaseQuantization& quantization) {
  torch::NoGradGuard no_grad;
  std::vector<float> staging;
  for (int unit = 0; unit < num_units(); ++unit) {
    for (std::size_t i = 0; i < specs_[unit].size(); ++i) {
      const ParamSpec& spec = specs_[unit][i];
      torch::Tensor flat = tensors_[unit][i].view({-1});
      NSS_ASSERT(!flat.is_meta(), "model", "cannot load values into meta tensors");
      if (quantization.nf4 && is_projection_weight(spec)) {
        // NF4's double quantisation keeps one mean per tensor: round-trip it whole.
        staging.resize(static_cast<std::size_t>(spec.numel()));
        weights.fill(spec, 0, spec.numel(), staging.data());
        quant::nf4_round_trip(staging.data(), spec.numel(), quantization.double_quant,
                              staging.data());
        flat.copy_(torch::from_blob(staging.data(), {spec.numel()}, torch::kFloat32));
        continue;
      }
      for (std::int64_t offset = 0; offset < spec.numel(); offset += kLoadPieceElements) {
        const std::int64_t count = std::min(kLoadPieceElements, spec.numel() - offset);
        staging.resize(static_cast<std::size_t>(count));
        weights.fill(spec, offset, count, staging.data());
        flat.narrow(0, offset, count)
            .copy_(torch::from_blob(staging.data(), {count}, torch::kFloat32));
      }
    }
  }
}

torch::Tensor LlamaModel::parameter(const std::string& name) const {
  for (int unit = 0; unit < num_units(); ++unit)
    for (std::size_t i = 0; i < specs_[unit].size(); ++i)
      if (specs_[unit][i].name == name) return tensors_[unit][i];
  throw InternalError("model", "no parameter '" + name + "'");
}

torch::Tensor LlamaModel::lm_head_weight() const {
  return model_.tie_word_embeddings ? tensors_.front().front() : tensors_.back().at(1);
}

torch::Tensor LlamaModel::hidden_states(const torch::Tensor& tokens, const DropoutKey* dropout,
                                        const DocumentMask* documents) const {
  const LayerPlans layers(model_, tokens.size(1), tensors_.front().front().device());
  torch::Tensor hidden = embedding_forward(tokens, tensors_.front().front(), layers.architecture());
  for (int layer = 0; layer < model_.num_hidden_layers; ++layer) {
    DropoutKey key;
    if (dropout) {
      key = *dropout;
      key.layer = layer;
    }
    hidden = decoder_block_forward(hidden, tensors_[layer + 1], model_, lora_, layers[layer],
                                   dropout ? &key : nullptr, documents);
  }
  return hidden;
}

torch::Tensor LlamaModel::logits(const torch::Tensor& tokens, const DocumentMask* documents) const {
  return head_logits_forward(hidden_states(tokens, nullptr, documents), tensors_.back().front(),
                             lm_head_weight(), model_);
}

torch::Tensor LlamaModel::loss(const torch::Tensor& tokens, const torch::Tensor& targets,
                               const DropoutKey* dropout) const {
  const torch::Tensor mean_weights =
      torch::full(targets.sizes(), 1.0 / static_cast<double>(targets.numel()),
                  torch::TensorOptions().dtype(torch::kFloat32).device(targets.device()));
  return weighted_loss(tokens, targets, mean_weights, dropout);
}

torch::Tensor LlamaModel::weighted_loss(const torch::Tensor& tokens, const torch::Tensor& targets,
                                        const torch::Tensor& weights, const DropoutKey* dropout,
                                        const DocumentMask* documents) const {
  return head_loss_forward(hidden_states(tokens, dropout, documents), tensors_.back().front(),
                           lm_head_weight(), targets, weights, model_);
}

LlamaModel load_pretrained_model(const std::string& dir, const config::LoraConfig& lora,
                                 torch::TensorOptions options, std::uint64_t seed,
                                 const BaseQuantization& quantization) {
  config::ModelConfig model = hf::PretrainedDirectory::open(dir)->config();
  model.from_pretrained = dir;
  LlamaModel result(model, lora, options);
  result.load(InitialWeights(model, lora, seed), quantization);
  return result;
}

}  // namespace nss::model
