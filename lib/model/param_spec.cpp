#include "model/param_spec.h"

#include <algorithm>

#include "arch/architecture.h"
#include "core/error.h"

namespace nss::model {
namespace {

struct Projection {
  const char* name;
  const char* module;  // "self_attn" or "mlp"
  std::int64_t out, in;
};

// [out, in] of each projection, in parameter order.
std::vector<Projection> projections(const config::ModelConfig& m) {
  const std::int64_t q = m.num_attention_heads * m.head_dim;
  const std::int64_t kv = m.num_key_value_heads * m.head_dim;
  const std::int64_t h = m.hidden_size, i = m.intermediate_size;
  return {{"q_proj", "self_attn", q, h},  {"k_proj", "self_attn", kv, h},
          {"v_proj", "self_attn", kv, h}, {"o_proj", "self_attn", h, q},
          {"gate_proj", "mlp", i, h},     {"up_proj", "mlp", i, h},
          {"down_proj", "mlp", h, i}};
}

bool targeted(const config::LoraConfig& lora, const std::string& projection) {
  return lora.enabled &&
         std::find(lora.targets.begin(), lora.targets.end(), projection) != lora.targets.end();
}

}  // namespace

std::int64_t ParamSpec::numel() const {
  std::int64_t n = 1;
  for (auto extent : shape) n *= extent;
  return n;
}

const std::vector<std::string>& projection_names() {
  static const std::vector<std::string> names = {"q_proj",    "k_proj",  "v_proj",   "o_proj",
                                                 "gate_proj", "up_proj", "down_proj"};
  return names;
}

bool is_projection_weight(const ParamSpec& spec) {
  return spec.role == ParamRole::kLinear && spec.name.rfind("model.layers.", 0) == 0;
}

int num_units(const config::ModelConfig& model) {
  return static_cast<int>(model.num_hidden_layers) + 2;
}

std::vector<ParamSpec> unit_parameters(const config::ModelConfig& m, const config::LoraConfig& lora,
                                       int unit) {
  NSS_ASSERT(unit >= 0 && unit < num_units(m), "model",
             "unit " + std::to_string(unit) + " out of range");
  const bool base_trainable = !lora.enabled;
  const bool quantized = lora.enabled && lora.quantize_base == config::QuantizeBase::kNf4;
  const std::int64_t h = m.hidden_size;
  if (unit == 0)
    return {
        {"model.embed_tokens.weight", {m.vocab_size, h}, ParamRole::kEmbedding, base_trainable}};
  if (unit == num_units(m) - 1) {
    std::vector<ParamSpec> head = {{"model.norm.weight", {h}, ParamRole::kNorm, base_trainable}};
    if (!m.tie_word_embeddings)
      head.push_back({"lm_head.weight", {m.vocab_size, h}, ParamRole::kLinear, base_trainable});
    return head;
  }
  // A block's tensors as its family describes them; LoRA's after each
  // targeted projection.
  const std::string prefix = "model.layers." + std::to_string(unit - 1) + ".";
  std::vector<ParamSpec> params;
  for (const auto& tensor : arch::describe(m).block) {
    const std::string name = prefix + tensor.name;
    switch (tensor.kind) {
      case arch::TensorKind::kNorm:
      case arch::TensorKind::kHeadNorm:
        params.push_back({name, tensor.shape, ParamRole::kNorm, base_trainable});
        break;
      case arch::TensorKind::kBias:
        params.push_back({name, tensor.shape, ParamRole::kBias, base_trainable});
        break;
      case arch::TensorKind::kProjection: {
        params.push_back({name, tensor.shape, ParamRole::kLinear, base_trainable, quantized});
        if (!targeted(lora, tensor.projection)) break;
        const std::string module = name.substr(0, name.size() - std::string(".weight").size());
        const std::int64_t out = tensor.shape[0], in = tensor.shape[1];
        params.push_back({module + ".lora_A.weight", {lora.rank, in}, ParamRole::kLoraA, true});
        params.push_back({module + ".lora_B.weight", {out, lora.rank}, ParamRole::kLoraB, true});
        break;
      }
    }
  }
  return params;
}

std::vector<ParamSpec> all_parameters(const config::ModelConfig& model,
                                      const config::LoraConfig& lora) {
  std::vector<ParamSpec> all;
  for (int unit = 0; unit < num_units(model); ++unit) {
    auto params = unit_parameters(model, lora, unit);
    all.insert(all.end(), std::make_move_iterator(params.begin()),
               std::make_move_iterator(params.end()));
  }
  return all;
}

ParameterCount count_parameters(const config::ModelConfig& model, const config::LoraConfig& lora) {
  ParameterCount count;
  for (const auto& p : all_parameters(model, lora)) {
    count.total += p.numel();
    if (p.trainable) count.trainable += p.numel();
  }
  return count;
}

ParameterCount parameter_count_formula(const config::ModelConfig& m,
                                       const config::LoraConfig& lora) {
  const std::int64_t h = m.hidden_size, i = m.intermediate_size, l = m.num_hidden_layers;
  const std::int64_t d = m.head_dim, q = m.num_attention_heads * d;
  const std::int64_t kv = m.num_key_value_heads * d;
  const arch::Family& family = arch::family(m.family);
  const arch::AttentionBiases bias = arch::attention_biases(family, m);
  const std::int64_t embeddings = m.vocab_size * h * (m.tie_word_embeddings ? 1 : 2);
  const std::int64_t norms = (family.sandwich_norms ? 4 : 2) * h + (family.qk_norm ? 2 * d : 0);
  const std::int64_t biases = (bias.qkv ? q + 2 * kv : 0) + (bias.o ? h : 0);
  const std::int64_t block = 2 * h * q + 2 * h * kv + 3 * h * i + norms + biases;
  const std::int64_t base = embeddings + h + l * block;
  // A rank-r adapter on an [out, in] projection adds r * (in + out).
  std::int64_t adapters = 0;
  for (const auto& p : projections(m))
    if (targeted(lora, p.name)) adapters += l * lora.rank * (p.in + p.out);
  return {base + adapters, lora.enabled ? adapters : base};
}

}  // namespace nss::model
