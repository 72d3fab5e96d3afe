#include "ner/encoder_config.h"

#include <array>

#include <nlohmann/json.hpp>

#include "core/error.h"

namespace nss::ner {
namespace {

constexpr const char* kComponent = "ner";

constexpr std::array<EncoderFamily, 2> kFamilies{{
    {"bert",
     "BertForTokenClassification",
     "bert.",
     "hidden_size",
     "num_hidden_layers",
     "num_attention_heads",
     "intermediate_size",
     "hidden_act",
     "layer_norm_eps",
     1e-12,
     "embeddings.word_embeddings",
     "embeddings.position_embeddings",
     "embeddings.token_type_embeddings",
     "embeddings.LayerNorm",
     "encoder.layer.",
     "attention.self.query",
     "attention.self.key",
     "attention.self.value",
     "attention.output.dense",
     "attention.output.LayerNorm",
     "intermediate.dense",
     "output.dense",
     "output.LayerNorm"},
    // DistilBERT's epsilon is fixed at 1e-12 in its modules, not configured.
    {"distilbert",
     "DistilBertForTokenClassification",
     "distilbert.",
     "dim",
     "n_layers",
     "n_heads",
     "hidden_dim",
     "activation",
     nullptr,
     1e-12,
     "embeddings.word_embeddings",
     "embeddings.position_embeddings",
     nullptr,
     "embeddings.LayerNorm",
     "transformer.layer.",
     "attention.q_lin",
     "attention.k_lin",
     "attention.v_lin",
     "attention.out_lin",
     "sa_layer_norm",
     "ffn.lin1",
     "ffn.lin2",
     "output_layer_norm"},
}};

[[noreturn]] void bad_config(const std::string& origin, const std::string& what,
                             const std::string& fix = {}) {
  throw DataError(kComponent, origin + ": " + what,
                  fix.empty() ? "give the directory of a BERT or DistilBERT token-classification "
                                "model saved by transformers (config.json, model.safetensors, "
                                "tokenizer.json)"
                              : fix);
}

std::int64_t positive(const nlohmann::json& json, const char* key, const std::string& origin) {
  const auto it = json.find(key);
  if (it == json.end() || !it->is_number_integer() || it->get<std::int64_t>() <= 0)
    bad_config(origin, std::string("\"") + key + "\" must be a positive integer");
  return it->get<std::int64_t>();
}

const EncoderFamily& family_of(const nlohmann::json& json, const std::string& origin) {
  const std::string type = json.value("model_type", "");
  for (const EncoderFamily& family : kFamilies) {
    if (type != family.model_type) continue;
    const auto architectures = json.find("architectures");
    if (architectures != json.end() && architectures->is_array() && !architectures->empty() &&
        architectures->front() != family.architecture)
      bad_config(origin,
                 "architecture " + architectures->front().dump() + " is not a token classifier",
                 std::string("give a ") + family.architecture + " model (a named-entity tagger)");
    return family;
  }
  bad_config(origin, "model_type \"" + type +
                         "\" is not supported (supported: " + supported_model_types() + ")");
}

Activation activation_of(const nlohmann::json& json, const EncoderFamily& family,
                         const std::string& origin) {
  const std::string name = json.value(family.activation_key, "gelu");
  if (name == "gelu") return Activation::kGelu;
  if (name == "gelu_new" || name == "gelu_pytorch_tanh") return Activation::kGeluTanh;
  if (name == "relu") return Activation::kRelu;
  bad_config(origin, std::string("\"") + family.activation_key + "\": \"" + name +
                         "\" is not supported (gelu, gelu_new, gelu_pytorch_tanh, relu are)");
}

std::vector<std::string> labels_of(const nlohmann::json& json, const std::string& origin) {
  const auto it = json.find("id2label");
  if (it == json.end() || !it->is_object() || it->empty())
    bad_config(origin, "\"id2label\" is missing: the model's labels are unknown");
  std::vector<std::string> labels(it->size());
  std::vector<bool> seen(it->size(), false);
  for (const auto& [key, label] : it->items()) {
    std::size_t used = 0;
    long id = -1;
    try {
      id = std::stol(key, &used);
    } catch (const std::exception&) {
    }
    if (used != key.size() || id < 0 || static_cast<std::size_t>(id) >= labels.size() || seen[id] ||
        !label.is_string())
      bad_config(origin, "\"id2label\" must number its string labels 0.." +
                             std::to_string(labels.size() - 1) + ", each once");
    seen[id] = true;
    labels[id] = label.get<std::string>();
  }
  return labels;
}

EncoderConfig encoder_config(const nlohmann::json& json, const std::string& origin) {
  EncoderConfig config;
  config.family = &family_of(json, origin);
  const EncoderFamily& family = *config.family;
  config.hidden = positive(json, family.hidden_key, origin);
  config.layers = positive(json, family.layers_key, origin);
  config.heads = positive(json, family.heads_key, origin);
  config.intermediate = positive(json, family.intermediate_key, origin);
  config.max_positions = positive(json, "max_position_embeddings", origin);
  config.vocab = positive(json, "vocab_size", origin);
  if (config.hidden % config.heads != 0)
    bad_config(origin, "the hidden size " + std::to_string(config.hidden) +
                           " is not divisible by the " + std::to_string(config.heads) + " heads");
  if (family.token_type_embeddings) config.type_vocab = positive(json, "type_vocab_size", origin);
  config.eps = family.eps_key ? json.value(family.eps_key, family.fixed_eps) : family.fixed_eps;
  if (!(config.eps > 0)) bad_config(origin, "the layer-norm epsilon must be positive");
  config.activation = activation_of(json, family, origin);
  const std::string positions = json.value("position_embedding_type", "absolute");
  if (positions != "absolute")
    bad_config(origin,
               "position_embedding_type \"" + positions + "\" is not supported (absolute is)");
  config.labels = labels_of(json, origin);
  return config;
}

}  // namespace

std::string supported_model_types() {
  std::string out;
  for (const EncoderFamily& family : kFamilies)
    out += (out.empty() ? "" : ", ") + std::string(family.model_type);
  return out;
}

EncoderConfig parse_encoder_config(const std::string& json_text, const std::string& origin) {
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(json_text);
  } catch (const nlohmann::json::exception& e) {
    bad_config(origin, std::string("not valid JSON: ") + e.what());
  }
  if (!json.is_object()) bad_config(origin, "not a JSON object");
  try {
    return encoder_config(json, origin);
  } catch (const nlohmann::json::exception& e) {
    bad_config(origin, std::string("a key has the wrong type: ") + e.what());
  }
}

}  // namespace nss::ner
