#include "hf/hf_config.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <functional>

#include <nlohmann/json.hpp>

#include "arch/architecture.h"
#include "config/model_presets.h"
#include "config/problems.h"
#include "core/error.h"
#include "core/fs.h"
#include "hf/hub_cache.h"
#include "hf/weight_files.h"

namespace nss::hf {
namespace {

using nlohmann::json;

// Reads typed values out of config.json, naming the file and key on errors.
class ConfigJson {
 public:
  ConfigJson(const json& root, std::string origin) : root_(root), origin_(std::move(origin)) {}

  const json* get(const json& object, const char* key) const {
    const auto it = object.find(key);
    return it == object.end() || it->is_null() ? nullptr : &*it;
  }

  std::int64_t integer(const json& object, const char* key, std::int64_t fallback) const {
    const json* value = get(object, key);
    if (!value) return fallback;
    if (!value->is_number_integer()) fail(key, "must be an integer, got " + value->dump());
    return value->get<std::int64_t>();
  }

  double number(const json& object, const char* key, double fallback) const {
    const json* value = get(object, key);
    if (!value) return fallback;
    if (!value->is_number()) fail(key, "must be a number, got " + value->dump());
    return value->get<double>();
  }

  double required_number(const json& object, const char* key) const {
    if (!get(object, key)) fail(key, "is required for this rope_scaling type");
    return number(object, key, 0);
  }

  bool boolean(const json& object, const char* key, bool fallback) const {
    const json* value = get(object, key);
    if (!value) return fallback;
    if (!value->is_boolean()) fail(key, "must be true or false, got " + value->dump());
    return value->get<bool>();
  }

  std::string string(const json& object, const char* key, const std::string& fallback) const {
    const json* value = get(object, key);
    if (!value) return fallback;
    if (!value->is_string()) fail(key, "must be a string, got " + value->dump());
    return value->get<std::string>();
  }

  [[noreturn]] void fail(
      const std::string& key, const std::string& problem,
      const std::string& hint = "use the config.json that came with the weights") const {
    throw DataError("hf", origin_ + ": \"" + key + "\" " + problem, hint);
  }

  const json& root() const { return root_; }

 private:
  const json& root_;
  std::string origin_;
};

std::string architecture_list() {
  std::string list;
  for (const auto& family : arch::families())
    list += (list.empty() ? "" : ", ") + family.hf_architecture;
  return list;
}

// The family config.json names: "architectures" first, else "model_type".
const arch::Family& family_of(const ConfigJson& c) {
  const json& root = c.root();
  const std::string hint = "choose a model of a family nss_hpc implements (docs/model.md)";
  if (const json* architectures = c.get(root, "architectures")) {
    if (!architectures->is_array())
      c.fail("architectures", "must be a list, got " + architectures->dump());
    for (const auto& name : *architectures)
      for (const auto& family : arch::families())
        if (name == family.hf_architecture) return family;
    c.fail("architectures",
           "is " + architectures->dump() + "; nss_hpc implements " + architecture_list(), hint);
  }
  const std::string model_type = c.string(root, "model_type", "");
  if (const arch::Family* family = arch::family_of_model_type(model_type)) return *family;
  c.fail("model_type",
         "is '" + model_type + "' and no \"architectures\" is given; nss_hpc implements " +
             architecture_list(),
         hint);
}

// Features of the family's relatives that this implementation does not compute.
void check_unsupported(const ConfigJson& c, const arch::Family& family) {
  const json& root = c.root();
  const std::string wanted = arch::hf_activation_name(family.activation);
  const std::string activation = c.string(root, family.activation_key.c_str(), wanted);
  if (activation != wanted)
    c.fail(family.activation_key,
           "is '" + activation + "'; " + family.hf_architecture + " computes \"" + wanted + "\"");
  if (family.attention_bias != arch::AttentionBias::kFromConfig &&
      c.boolean(root, "attention_bias", false))
    c.fail("attention_bias", "is true; " + family.hf_architecture + " has no such biases");
  if (c.boolean(root, "mlp_bias", false))
    c.fail("mlp_bias", "is true; MLP projections with bias are not implemented");
  for (const char* key : {"attn_logit_softcapping", "final_logit_softcapping"})
    if (const json* value = c.get(root, key))
      c.fail(key, "is " + value->dump() + "; logit softcapping is not implemented",
             "use a model without softcapping (Gemma 3 has none; Gemma 2 is not implemented)");
}

// transformers' default when a config.json has no "sliding_window" key; null is none.
constexpr std::int64_t kDefaultSlidingWindow = 4096;

// Which layers attend in a window, as the family's config.json says it.
std::vector<std::string> layer_types_of(const ConfigJson& c, const arch::Family& family,
                                        std::int64_t layers, std::int64_t window) {
  const json& root = c.root();
  std::vector<std::string> types(static_cast<std::size_t>(layers), arch::kFullAttention);
  if (const json* listed = c.get(root, "layer_types")) {
    if (!listed->is_array() || listed->size() != types.size())
      c.fail("layer_types", "must list one type per layer (" + std::to_string(layers) + ")");
    for (std::size_t l = 0; l < types.size(); ++l) {
      const json& type = (*listed)[l];
      if (type != arch::kFullAttention && type != arch::kSlidingAttention)
        c.fail("layer_types",
               "has " + type.dump() + "; implemented: full_attention, sliding_attention");
      types[l] = type.get<std::string>();
    }
    return types;
  }
  const auto slide_from = [&](std::int64_t first, std::int64_t pattern) {
    for (std::int64_t l = first; l < layers; ++l)
      if (pattern == 0 || (l + 1) % pattern != 0)
        types[static_cast<std::size_t>(l)] = arch::kSlidingAttention;
  };
  switch (family.sliding_layers) {
    case arch::SlidingLayers::kNone:
      break;
    case arch::SlidingLayers::kAll:
      if (window > 0) slide_from(0, 0);
      break;
    case arch::SlidingLayers::kAboveMaxWindow:
      if (window > 0 && c.boolean(root, "use_sliding_window", false))
        slide_from(c.integer(root, "max_window_layers", layers), 0);
      break;
    case arch::SlidingLayers::kPattern:
      if (window > 0) slide_from(0, c.integer(root, "sliding_window_pattern", 6));
      break;
  }
  return types;
}

// Which layers rotate q and k: SmolLM3's "no_rope_layers" (0 for a layer
// without RoPE), else, as SmolLM3Config derives it, every
// "no_rope_layer_interval"-th layer without; every layer in other families.
std::vector<bool> rotated_layers(const ConfigJson& c, const arch::Family& family,
                                 std::size_t layers) {
  const json& root = c.root();
  std::vector<bool> rotated(layers, true);
  if (const json* listed = c.get(root, "no_rope_layers")) {
    if (!listed->is_array() || listed->size() != layers)
      c.fail("no_rope_layers", "must list 0 or 1 for each layer");
    for (std::size_t l = 0; l < layers; ++l) {
      if ((*listed)[l] != 0 && (*listed)[l] != 1)
        c.fail("no_rope_layers", "must list 0 or 1 for each layer");
      rotated[l] = (*listed)[l] == 1;
    }
  } else if (family.no_rope_interval > 0) {
    const std::int64_t interval =
        c.integer(root, "no_rope_layer_interval", family.no_rope_interval);
    if (interval <= 0) c.fail("no_rope_layer_interval", "must be positive");
    for (std::size_t l = 0; l < layers; ++l)
      rotated[l] = (static_cast<std::int64_t>(l) + 1) % interval != 0;
  }
  return rotated;
}

// The per-layer plan: sliding windows, layers without RoPE (SmolLM3's
// "no_rope_layers", 0 for a layer without), the local RoPE base and the query
// scaling; model.layer_types stays empty when every layer is full attention
// with RoPE, as a Llama's is.
void read_layers(const ConfigJson& c, const arch::Family& family, config::ModelConfig& m) {
  const json& root = c.root();
  if (family.sliding_window) {
    const auto it = root.find("sliding_window");
    m.sliding_window =
        it == root.end() ? kDefaultSlidingWindow : c.integer(root, "sliding_window", 0);
    if (m.sliding_window < 0) c.fail("sliding_window", "must be positive or null");
  }
  std::vector<std::string> types = layer_types_of(c, family, m.num_hidden_layers, m.sliding_window);
  const std::vector<bool> rotated = rotated_layers(c, family, types.size());
  for (std::size_t l = 0; l < types.size(); ++l) {
    if (rotated[l]) continue;
    if (types[l] != arch::kFullAttention)
      c.fail("no_rope_layers",
             "turns RoPE off in a sliding-window layer, which is not implemented");
    types[l] = arch::kFullAttentionNoRope;
  }
  const bool all_full = std::all_of(types.begin(), types.end(),
                                    [](const std::string& t) { return t == arch::kFullAttention; });
  if (!all_full) m.layer_types = std::move(types);
  if (std::find(m.layer_types.begin(), m.layer_types.end(), arch::kSlidingAttention) ==
      m.layer_types.end())
    m.sliding_window = 0;  // a window no layer uses is no part of the model
  m.rope_local_theta = c.number(root, "rope_local_base_freq", m.rope_local_theta);
  m.query_pre_attn_scalar = c.number(root, "query_pre_attn_scalar", 0);
  if (family.attention_bias == arch::AttentionBias::kFromConfig)
    m.attention_bias = c.boolean(root, "attention_bias", false);
}

// One RoPE description: the legacy "rope_scaling" object, or an entry of
// transformers 5's "rope_parameters" (`key` names it in errors).
void read_rope_type(const ConfigJson& c, const json* scaling, const std::string& key,
                    config::RopeScalingConfig& rope) {
  if (!scaling) return;
  if (!scaling->is_object()) c.fail(key, "must be an object or null, got " + scaling->dump());
  // transformers copies the legacy "type" into "rope_type" when only it is given.
  std::string type = c.string(*scaling, "rope_type", "");
  if (type.empty()) type = c.string(*scaling, "type", "");
  if (type.empty()) c.fail(key, "has neither \"rope_type\" nor \"type\"");
  if (type == "default") return;
  // Hugging Face names the scalings as the configuration does; "default" is none.
  const auto parsed = config::choice_of<config::RopeScaling>(type);
  if (!parsed || *parsed == config::RopeScaling::kNone)
    c.fail(key, "has type '" + type + "'; implemented: default, linear, llama3",
           "use a model whose RoPE scaling is linear or llama3 (or none)");
  rope.type = *parsed;
  rope.factor = c.required_number(*scaling, "factor");
  if (rope.type == config::RopeScaling::kLlama3) {
    rope.low_freq_factor = c.required_number(*scaling, "low_freq_factor");
    rope.high_freq_factor = c.required_number(*scaling, "high_freq_factor");
    if (!c.get(*scaling, "original_max_position_embeddings"))
      c.fail("original_max_position_embeddings", "is required for rope_scaling type llama3");
    rope.original_max_position_embeddings =
        c.integer(*scaling, "original_max_position_embeddings", 0);
  }
}

// RoPE's base and scaling: "rope_theta" and "rope_scaling", or transformers
// 5's "rope_parameters" — one description, or one per layer type (Gemma 3:
// its sliding layers' base is model.rope_local_theta, unscaled).
void read_rope(const ConfigJson& c, config::ModelConfig& m) {
  const json& root = c.root();
  m.rope_scaling = config::RopeScalingConfig{};
  const json* parameters = c.get(root, "rope_parameters");
  if (!parameters) {
    m.rope_theta = c.number(root, "rope_theta", 10000.0);
    read_rope_type(c, c.get(root, "rope_scaling"), "rope_scaling", m.rope_scaling);
    return;
  }
  if (!parameters->is_object())
    c.fail("rope_parameters", "must be an object, got " + parameters->dump());
  const json* global = parameters;
  // One entry per layer type: objects only, no description of its own.
  const bool per_layer_type = !parameters->empty() && !parameters->contains("rope_type") &&
                              !parameters->contains("rope_theta") &&
                              std::all_of(parameters->begin(), parameters->end(),
                                          [](const json& entry) { return entry.is_object(); });
  if (per_layer_type) {
    for (const auto& [layer_type, unused] : parameters->items()) {
      (void)unused;
      if (layer_type != arch::kFullAttention && layer_type != arch::kSlidingAttention)
        c.fail("rope_parameters", "has an entry for layer type '" + layer_type +
                                      "'; implemented: full_attention, sliding_attention");
    }
    global = c.get(*parameters, arch::kFullAttention);
    if (!global) c.fail("rope_parameters", "has no full_attention entry");
    if (const json* local = c.get(*parameters, arch::kSlidingAttention)) {
      config::RopeScalingConfig local_scaling;
      read_rope_type(c, local, "rope_parameters.sliding_attention", local_scaling);
      if (local_scaling.type != config::RopeScaling::kNone)
        c.fail("rope_parameters.sliding_attention",
               "is scaled; only unscaled local RoPE is implemented");
      m.rope_local_theta = c.number(*local, "rope_theta", 10000.0);
    }
  }
  m.rope_theta = c.number(*global, "rope_theta", 10000.0);
  read_rope_type(c, global, "rope_parameters", m.rope_scaling);
}

// Every shape key: its text for messages and whether two models agree on it.
// Floating keys agree within a relative 1e-6, so a value that went through
// float32 (9.999999747378752e-06 for 1e-5, common in converted checkpoints)
// is the same model.
struct ShapeKey {
  const char* path;
  std::function<std::string(const config::ModelConfig&)> text;
  std::function<bool(const config::ModelConfig&, const config::ModelConfig&)> agree;
};

std::string to_text(std::int64_t value) {
  return std::to_string(value);
}
std::string to_text(bool value) {
  return value ? "true" : "false";
}
// Shortest text that reads back as the same double.
std::string to_text(double value) {
  char buffer[32];
  const auto end = std::to_chars(buffer, buffer + sizeof buffer, value).ptr;
  return std::string(buffer, end);
}
std::string to_text(const std::string& value) {
  return "'" + value + "'";
}
std::string to_text(const std::vector<std::string>& value) {
  std::string text = "[";
  for (std::size_t i = 0; i < value.size(); ++i) text += (i ? ", " : "") + value[i];
  return text + "]";
}
std::string to_text(config::RopeScaling value) {
  return config::choice_name(value);
}

constexpr double kRelativeTolerance = 1e-6;

bool same(double a, double b) {
  return std::fabs(a - b) <= kRelativeTolerance * std::max(std::fabs(a), std::fabs(b));
}
template <typename T>
bool same(const T& a, const T& b) {
  return a == b;
}

template <typename Get>
ShapeKey key(const char* path, Get get) {
  return {path, [get](const config::ModelConfig& m) { return to_text(get(m)); },
          [get](const config::ModelConfig& a, const config::ModelConfig& b) {
            return same(get(a), get(b));
          }};
}

const std::vector<ShapeKey>& shape_keys() {
  using M = config::ModelConfig;
  static const std::vector<ShapeKey> keys = {
      key("hidden_size", [](const M& m) { return m.hidden_size; }),
      key("intermediate_size", [](const M& m) { return m.intermediate_size; }),
      key("num_hidden_layers", [](const M& m) { return m.num_hidden_layers; }),
      key("num_attention_heads", [](const M& m) { return m.num_attention_heads; }),
      key("num_key_value_heads", [](const M& m) { return m.num_key_value_heads; }),
      key("head_dim", [](const M& m) { return m.head_dim; }),
      key("vocab_size", [](const M& m) { return m.vocab_size; }),
      key("max_position_embeddings", [](const M& m) { return m.max_position_embeddings; }),
      key("rms_norm_eps", [](const M& m) { return m.rms_norm_eps; }),
      key("rope_theta", [](const M& m) { return m.rope_theta; }),
      key("rope_scaling.type", [](const M& m) { return m.rope_scaling.type; }),
      key("rope_scaling.factor", [](const M& m) { return m.rope_scaling.factor; }),
      key("rope_scaling.low_freq_factor",
          [](const M& m) { return m.rope_scaling.low_freq_factor; }),
      key("rope_scaling.high_freq_factor",
          [](const M& m) { return m.rope_scaling.high_freq_factor; }),
      key("rope_scaling.original_max_position_embeddings",
          [](const M& m) { return m.rope_scaling.original_max_position_embeddings; }),
      key("tie_word_embeddings", [](const M& m) { return m.tie_word_embeddings; }),
      key("family", [](const M& m) { return m.family; }),
      key("attention_bias", [](const M& m) { return m.attention_bias; }),
      key("sliding_window", [](const M& m) { return m.sliding_window; }),
      key("layer_types", [](const M& m) { return m.layer_types; }),
      key("rope_local_theta", [](const M& m) { return m.rope_local_theta; }),
      key("query_pre_attn_scalar", [](const M& m) { return m.query_pre_attn_scalar; }),
  };
  return keys;
}

}  // namespace

config::ModelConfig parse_hf_config(const std::string& json_text, const std::string& origin) {
  json root;
  try {
    root = json::parse(json_text);
  } catch (const json::parse_error& e) {
    throw DataError("hf", origin + " is not valid JSON: " + e.what(),
                    "use the config.json that came with the weights");
  }
  if (!root.is_object()) throw DataError("hf", origin + " must hold a JSON object");
  const ConfigJson c(root, origin);
  const arch::Family& family = family_of(c);
  check_unsupported(c, family);

  // Defaults are transformers' LlamaConfig defaults.
  config::ModelConfig m;
  m.family = family.name;
  m.hidden_size = c.integer(root, "hidden_size", 4096);
  m.intermediate_size = c.integer(root, "intermediate_size", 11008);
  m.num_hidden_layers = c.integer(root, "num_hidden_layers", 32);
  m.num_attention_heads = c.integer(root, "num_attention_heads", 32);
  m.num_key_value_heads = c.integer(root, "num_key_value_heads", m.num_attention_heads);
  if (m.num_attention_heads <= 0) c.fail("num_attention_heads", "must be positive");
  m.head_dim = c.integer(root, "head_dim", m.hidden_size / m.num_attention_heads);
  m.vocab_size = c.integer(root, "vocab_size", 32000);
  m.max_position_embeddings = c.integer(root, "max_position_embeddings", 2048);
  m.rms_norm_eps = c.number(root, "rms_norm_eps", 1e-6);
  m.tie_word_embeddings = c.boolean(root, "tie_word_embeddings", false);
  read_rope(c, m);

  const std::pair<const char*, std::int64_t> positives[] = {
      {"hidden_size", m.hidden_size},
      {"intermediate_size", m.intermediate_size},
      {"num_hidden_layers", m.num_hidden_layers},
      {"num_key_value_heads", m.num_key_value_heads},
      {"head_dim", m.head_dim},
      {"vocab_size", m.vocab_size},
      {"max_position_embeddings", m.max_position_embeddings}};
  for (const auto& [key, value] : positives)
    if (value <= 0) c.fail(key, "must be positive, got " + std::to_string(value));
  if (m.num_attention_heads % m.num_key_value_heads != 0)
    c.fail("num_key_value_heads", "(" + std::to_string(m.num_key_value_heads) +
                                      ") must divide num_attention_heads (" +
                                      std::to_string(m.num_attention_heads) + ")");
  if (m.head_dim % 2 != 0) c.fail("head_dim", "must be even for rotary embeddings");
  if (!(m.rms_norm_eps > 0)) c.fail("rms_norm_eps", "must be positive");
  if (!(m.rope_theta > 0)) c.fail("rope_theta", "must be positive");
  read_layers(c, family, m);
  return m;
}

config::ModelConfig read_hf_config(const std::string& path) {
  return parse_hf_config(read_text_file(path, "hf"), path);
}

// The config.json keys of TokenIds, read from a base and written to an export.
constexpr const char* kTokenIdKeys[] = {"bos_token_id", "eos_token_id", "pad_token_id"};

TokenIds read_token_ids(const std::string& pretrained_directory, std::string* problem) {
  TokenIds ids;
  if (pretrained_directory.empty()) return ids;
  const std::string path = pretrained_directory + "/" + std::string(kConfigFile);
  try {
    const json root = json::parse(read_text_file(path, "hf"));
    for (const char* key : kTokenIdKeys)
      if (root.is_object() && root.contains(key)) ids[key] = root[key].dump();
  } catch (const std::exception& e) {
    // The export then writes null ids; the tokenizer files still name the tokens.
    if (problem) *problem = path + ": " + e.what();
  }
  return ids;
}

namespace {

// The layer plan in the keys transformers reads: "layer_types" (recent
// releases), the family's older keys where the plan fits them, SmolLM3's
// "no_rope_layers", the window (null when no layer slides).
void write_layers(nlohmann::ordered_json& out, const arch::Family& family,
                  const config::ModelConfig& m) {
  const auto layers = static_cast<std::size_t>(m.num_hidden_layers);
  std::vector<std::string> types(layers, arch::kFullAttention);
  std::vector<int> rope(layers, 1);
  std::vector<std::size_t> sliding;
  for (std::size_t l = 0; l < m.layer_types.size(); ++l) {
    if (m.layer_types[l] == arch::kSlidingAttention) {
      types[l] = arch::kSlidingAttention;
      sliding.push_back(l);
    }
    if (m.layer_types[l] == arch::kFullAttentionNoRope) rope[l] = 0;
  }
  out["sliding_window"] =
      sliding.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(m.sliding_window);
  if (family.sliding_layers == arch::SlidingLayers::kAboveMaxWindow) {
    out["use_sliding_window"] = !sliding.empty();
    out["max_window_layers"] =
        sliding.empty() ? m.num_hidden_layers : static_cast<std::int64_t>(sliding.front());
  }
  if (family.sliding_layers == arch::SlidingLayers::kPattern && !sliding.empty() &&
      sliding.size() < layers) {
    const auto first_full = static_cast<std::int64_t>(
        std::find(types.begin(), types.end(), arch::kFullAttention) - types.begin());
    out["sliding_window_pattern"] = first_full + 1;
  }
  out["layer_types"] = types;
  // Always where the family reads it: without it SmolLM3 leaves every fourth layer unrotated.
  if (family.no_rope_interval > 0 || std::find(rope.begin(), rope.end(), 0) != rope.end())
    out["no_rope_layers"] = rope;
}

}  // namespace

std::string hf_config_json(const config::ModelConfig& m, const std::string& torch_dtype,
                           const TokenIds& token_ids) {
  const arch::Family& family = arch::family(m.family);
  nlohmann::ordered_json out;
  out["architectures"] = {family.hf_architecture};
  out["model_type"] = family.model_type;
  out[family.activation_key] = arch::hf_activation_name(family.activation);
  // The key means q, k, v and o biases: what the families that read it compute.
  out["attention_bias"] = arch::attention_biases(family, m).o;
  out["attention_dropout"] = 0.0;
  out["mlp_bias"] = false;
  out["hidden_size"] = m.hidden_size;
  out["intermediate_size"] = m.intermediate_size;
  out["num_hidden_layers"] = m.num_hidden_layers;
  out["num_attention_heads"] = m.num_attention_heads;
  out["num_key_value_heads"] = m.num_key_value_heads;
  out["head_dim"] = m.head_dim;
  out["vocab_size"] = m.vocab_size;
  out["max_position_embeddings"] = m.max_position_embeddings;
  out["rms_norm_eps"] = m.rms_norm_eps;
  out["rope_theta"] = m.rope_theta;
  const auto& rope = m.rope_scaling;
  if (rope.type == config::RopeScaling::kNone) {
    out["rope_scaling"] = nullptr;
  } else {
    nlohmann::ordered_json scaling;
    scaling["rope_type"] = config::choice_name(rope.type);
    scaling["factor"] = rope.factor;
    if (rope.type == config::RopeScaling::kLlama3) {
      scaling["low_freq_factor"] = rope.low_freq_factor;
      scaling["high_freq_factor"] = rope.high_freq_factor;
      scaling["original_max_position_embeddings"] = rope.original_max_position_embeddings;
    }
    out["rope_scaling"] = scaling;
  }
  out["tie_word_embeddings"] = m.tie_word_embeddings;
  if (family.sliding_window) write_layers(out, family, m);
  if (m.rope_local_theta > 0) out["rope_local_base_freq"] = m.rope_local_theta;
  // An integer where it is whole: transformers 5's Gemma3TextConfig types it int.
  if (m.query_pre_attn_scalar > 0)
    out["query_pre_attn_scalar"] =
        m.query_pre_attn_scalar == std::floor(m.query_pre_attn_scalar)
            ? nlohmann::ordered_json(static_cast<std::int64_t>(m.query_pre_attn_scalar))
            : nlohmann::ordered_json(m.query_pre_attn_scalar);
  for (const char* key : kTokenIdKeys) {
    const auto id = token_ids.find(key);
    out[key] = id == token_ids.end() ? nlohmann::ordered_json()
                                     : nlohmann::ordered_json::parse(id->second);
  }
  out["initializer_range"] = 0.02;
  out["torch_dtype"] = torch_dtype;
  out["use_cache"] = true;
  return out.dump(2) + "\n";
}

std::vector<std::string> shape_differences(const config::ModelConfig& a,
                                           const config::ModelConfig& b) {
  std::vector<std::string> differences;
  for (const auto& key : shape_keys())
    if (!key.agree(a, b))
      differences.push_back(std::string(key.path) + " " + key.text(a) + " vs " + key.text(b));
  return differences;
}

config::ModelConfig resolve_pretrained_shape(const config::ModelConfig& configured) {
  const std::string dir = resolve_model_directory(configured.from_pretrained);
  const std::string path = dir + "/" + kConfigFile;
  const config::ModelConfig pretrained = read_hf_config(path);
  config::ModelConfig preset_shape;
  config::apply_model_preset(configured.preset, preset_shape);
  const bool preset_chosen = configured.preset != config::ModelConfig{}.preset;

  config::Problems problems;
  for (const auto& key : shape_keys()) {
    if (key.agree(configured, pretrained)) continue;
    const std::string value = key.text(configured);
    const std::string wanted = key.text(pretrained);
    const std::string full = std::string("model.") + key.path;
    if (!key.agree(configured, preset_shape))
      problems.add(full, "", "is " + value + " but " + path + " says " + wanted,
                   "remove the key: with model.from_pretrained, config.json defines the shape");
    else if (preset_chosen)
      problems.add(
          "model.preset", "",
          "'" + configured.preset + "' sets " + key.path + " = " + value + " but " + path +
              " says " + wanted,
          "remove model.preset: with model.from_pretrained, config.json defines the shape");
  }
  problems.throw_if_any();

  config::ModelConfig resolved = pretrained;
  resolved.preset = configured.preset;
  resolved.from_pretrained = std::filesystem::absolute(dir).lexically_normal().string();
  return resolved;
}

}  // namespace nss::hf
