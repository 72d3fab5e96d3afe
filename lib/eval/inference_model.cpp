#include "eval/inference_model.h"

#include <filesystem>

#include "checkpoint/checkpoint_reader.h"
#include "checkpoint/committed_step.h"
#include "checkpoint/trained_model.h"
#include "core/error.h"
#include "eval/checkpoint_model.h"
#include "eval/peft_adapter.h"
#include "hf/hub_cache.h"

namespace nss::eval {
namespace {

// A hub name that is no local path ("Org/Name[@revision]") is its snapshot
// in the local Hugging Face cache; anything else stays as given.
std::string local_or_cached(const std::string& given) {
  std::error_code error;
  if (given.empty() || std::filesystem::exists(given, error) || !hf::parse_hub_reference(given))
    return given;
  return hf::resolve_model_directory(given);
}

}  // namespace

InferenceModel load_inference_model(const ModelSource& source, torch::TensorOptions options) {
  const std::string path = local_or_cached(source.path);
  const std::string base = local_or_cached(source.base);
  const QuantizeRequest& quantize = source.quantize;
  check_quantize_request(quantize);
  const bool adapter = is_peft_adapter(path);
  if (adapter && base.empty())
    throw UsageError("eval", path + " is a PEFT adapter directory: its base model is needed",
                     "pass the base model's Hugging Face directory with --base DIR");
  if (!adapter && !base.empty())
    throw UsageError(
        "eval",
        "--base applies to a PEFT adapter directory, and " + path + " holds no adapter_config.json",
        "leave --base out for a model directory or a checkpoint step");
  const model::BaseQuantization as_read_or_nf4 = resolve_quantization(quantize, nullptr);
  if (adapter)
    return {load_peft_adapter_model(path, base, options, as_read_or_nf4), base, nullptr, nullptr};
  if (!checkpoint::names_a_step(path))
    return {model::load_pretrained_model(path, {}, options, 0, as_read_or_nf4), path, nullptr,
            nullptr};
  model::LlamaModel model = load_checkpoint_model(path, options, quantize);
  const checkpoint::CheckpointReader reader(path);
  const auto trained = checkpoint::trained_model(reader.index(), path);
  return {std::move(model), trained.base_path, trained.dataset, trained.privacy};
}

}  // namespace nss::eval
