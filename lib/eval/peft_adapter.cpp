#include "eval/peft_adapter.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include "checkpoint/hf_export.h"
#include "core/error.h"
#include "hf/safetensors_file.h"

namespace fs = std::filesystem;

namespace nss::eval {
namespace {

using nlohmann::json;

const std::vector<std::string> kProjections = {"q_proj",    "k_proj",  "v_proj",   "o_proj",
                                               "gate_proj", "up_proj", "down_proj"};

json read_adapter_config(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw DataError("eval", "cannot read " + path);
  const json doc = json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object())
    throw DataError("eval", path + " is not a JSON object",
                    "write it again with PEFT's save_pretrained or nss_consolidate --format hf");
  return doc;
}

// Refuses a setting that would make PEFT compute something this model does not.
void require_setting(const json& doc, const std::string& path, const char* key, bool supported,
                     const std::string& what) {
  if (supported) return;
  throw UsageError("eval",
                   path + ": " + key + " " + doc.value(key, json()).dump() + " is not supported",
                   "nss_hpc applies plain LoRA adapters (" + what + ")");
}

// A boolean setting; absent or null is PEFT's default, false.
bool flag(const json& doc, const char* key, const std::string& path) {
  const auto it = doc.find(key);
  if (it == doc.end() || it->is_null()) return false;
  if (!it->is_boolean())
    throw DataError("eval", path + ": " + key + " is " + it->dump() + ", not true or false",
                    "write it again with PEFT's save_pretrained or nss_consolidate --format hf");
  return it->get<bool>();
}

bool empty_or_null(const json& doc, const char* key) {
  const auto it = doc.find(key);
  return it == doc.end() || it->is_null() || (it->is_structured() && it->empty());
}

// target_modules as projection names: a list of them, one name, or PEFT's
// "all-linear" (every projection of a Llama block, not the LM head).
std::vector<std::string> target_projections(const json& doc, const std::string& path) {
  const json targets = doc.value("target_modules", json());
  std::vector<std::string> names;
  if (targets.is_string())
    names = targets == "all-linear" ? kProjections
                                    : std::vector<std::string>{targets.get<std::string>()};
  else if (targets.is_array())
    for (const auto& t : targets) names.push_back(t.is_string() ? t.get<std::string>() : t.dump());
  for (const auto& name : names)
    if (std::find(kProjections.begin(), kProjections.end(), name) == kProjections.end())
      throw UsageError("eval", path + ": target_modules entry '" + name + "' is not supported",
                       "adapters may target q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj "
                       "and down_proj (a list of those names, or \"all-linear\")");
  if (names.empty())
    throw DataError("eval", path + ": target_modules names no module",
                    "write it again with PEFT's save_pretrained or nss_consolidate --format hf");
  return names;
}

// The LoRA settings of adapter_config.json in nss_hpc's terms.
config::LoraConfig lora_settings(const std::string& path) {
  const json doc = read_adapter_config(path);
  require_setting(doc, path, "peft_type", doc.value("peft_type", json()) == "LORA",
                  "peft_type LORA");
  require_setting(doc, path, "bias", doc.value("bias", json("none")) == "none", "bias \"none\"");
  require_setting(doc, path, "fan_in_fan_out", !flag(doc, "fan_in_fan_out", path),
                  "fan_in_fan_out false");
  require_setting(doc, path, "use_dora", !flag(doc, "use_dora", path), "no DoRA");
  for (const char* key : {"modules_to_save", "layers_to_transform", "rank_pattern", "alpha_pattern",
                          "layer_replication"})
    require_setting(doc, path, key, empty_or_null(doc, key), std::string("no ") + key);
  const json r = doc.value("r", json()), alpha = doc.value("lora_alpha", json());
  if (!r.is_number_integer() || r.get<std::int64_t>() < 1 || !alpha.is_number() ||
      !(alpha.get<double>() > 0))
    throw DataError("eval",
                    path + ": r must be a positive integer and lora_alpha a positive number",
                    "write it again with PEFT's save_pretrained or nss_consolidate --format hf");
  config::LoraConfig lora;
  lora.enabled = true;
  lora.rank = r.get<std::int64_t>();
  // PEFT scales by lora_alpha / r, or lora_alpha / sqrt(r) with rsLoRA;
  // nss_hpc by alpha / rank.
  const bool rslora = flag(doc, "use_rslora", path);
  lora.alpha =
      alpha.get<double>() *
      (rslora ? static_cast<double>(lora.rank) / std::sqrt(static_cast<double>(lora.rank)) : 1.0);
  lora.targets = target_projections(doc, path);
  return lora;
}

// "base_model.model.<module>.lora_A[.default].weight" -> "<module>.lora_A.weight".
std::string model_name(std::string name) {
  const std::string prefix = checkpoint::kPeftPrefix;
  if (name.rfind(prefix, 0) == 0) name = name.substr(prefix.size());
  for (const char* adapter : {".lora_A", ".lora_B"}) {
    const std::string named = std::string(adapter) + ".default.weight";
    const auto at = name.find(named);
    if (at != std::string::npos && at + named.size() == name.size())
      name = name.substr(0, at) + adapter + ".weight";
  }
  return name;
}

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string text;
  for (const auto d : shape) text += (text.empty() ? "" : ", ") + std::to_string(d);
  return "[" + text + "]";
}

}  // namespace

bool is_peft_adapter(const std::string& dir) {
  std::error_code ec;
  return fs::is_directory(dir, ec) && fs::exists(fs::path(dir) / "adapter_config.json", ec);
}

model::LlamaModel load_peft_adapter_model(const std::string& adapter_dir,
                                          const std::string& base_dir, torch::TensorOptions options,
                                          const model::BaseQuantization& quantization) {
  const std::string config_path = (fs::path(adapter_dir) / "adapter_config.json").string();
  const std::string weights_path = (fs::path(adapter_dir) / "adapter_model.safetensors").string();
  const config::LoraConfig lora = lora_settings(config_path);
  const std::string named_base =
      read_adapter_config(config_path).value("base_model_name_or_path", json("")).dump();
  model::LlamaModel model = model::load_pretrained_model(base_dir, lora, options, 0, quantization);

  std::map<std::string, torch::Tensor> adapters;  // the model's A and B, by name
  for (int u = 0; u < model.num_units(); ++u)
    for (std::size_t i = 0; i < model.unit_specs(u).size(); ++i)
      if (model.unit_specs(u)[i].is_adapter())
        adapters[model.unit_specs(u)[i].name] = model.unit_tensors(u)[i];

  const auto weights = hf::SafetensorsFile::open(weights_path);
  std::set<std::string> filled;
  torch::NoGradGuard no_grad;
  for (const auto& stored : weights->tensors()) {
    const std::string name = model_name(stored.name);
    const auto it = adapters.find(name);
    if (it == adapters.end())
      throw DataError("eval",
                      weights_path + " holds " + stored.name +
                          ", which is not a LoRA matrix of this model's target_modules",
                      "nss_hpc applies A and B of the projections adapter_config.json targets");
    if (!filled.insert(name).second)
      throw DataError("eval", weights_path + " holds " + name + " twice (as " + stored.name + ")",
                      "keep one adapter per module: write it again with PEFT's save_pretrained");
    torch::Tensor& tensor = it->second;
    if (stored.shape != tensor.sizes().vec())
      throw UsageError("eval",
                       weights_path + ": " + stored.name + " has shape " +
                           shape_text(stored.shape) + ", but " + base_dir + " with r " +
                           std::to_string(lora.rank) + " needs " + shape_text(tensor.sizes().vec()),
                       "pass the base model the adapter was trained on with --base (its "
                       "adapter_config.json names " +
                           named_base + ")");
    torch::Tensor host = torch::empty(tensor.sizes(), torch::kFloat32);
    weights->read_float32(stored.name, 0, stored.numel(), host.data_ptr<float>());
    tensor.copy_(host);
  }
  for (const auto& [name, tensor] : adapters)
    if (!filled.count(name))
      throw DataError("eval",
                      weights_path + " has no " + std::string(checkpoint::kPeftPrefix) + name +
                          " for target_modules of adapter_config.json",
                      "write the adapter again with PEFT's save_pretrained or nss_consolidate "
                      "--format hf");
  spdlog::info("[eval] {} over {}: {} LoRA matrices of rank {} (scale {}) applied unmerged",
               adapter_dir, base_dir, filled.size(), lora.rank,
               lora.alpha / static_cast<double>(lora.rank));
  return model;
}

}  // namespace nss::eval
