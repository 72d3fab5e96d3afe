// A PEFT LoRA adapter directory over a Hugging Face base: adapter_config.json
// and adapter_model.safetensors as PEFT's save_pretrained writes them (and
// nss_consolidate --format hf for a LoRA step), the base from a local model
// directory (--base; the config's base_model_name_or_path is only named in
// messages, nothing is downloaded). The result is the LlamaModel with the
// base's weights and the adapter's A and B, applied unmerged: PEFT's
// base(x) + B(A(x)) * lora_alpha / r (/ sqrt(r) with use_rslora).
// Supported: peft_type LORA on any of the seven projections, bias "none",
// no fan_in_fan_out, DoRA, modules_to_save, layer or rank patterns; anything
// else is refused (exit 2) rather than silently computed differently.
#pragma once

#include <string>

#include <torch/types.h>

#include "model/llama_model.h"

namespace nss::eval {

/// True when `dir` is a directory holding adapter_config.json.
bool is_peft_adapter(const std::string& dir);

/// The model of adapter `adapter_dir` over base `base_dir`, created with
/// `options`. UsageError (exit 2) for an unsupported adapter configuration or
/// a base whose shapes the adapter does not fit; DataError (exit 4) for a
/// malformed adapter_config.json or adapter_model.safetensors (missing, extra
/// or non-finite tensors), and as load_pretrained_model for the base.
model::LlamaModel load_peft_adapter_model(const std::string& adapter_dir,
                                          const std::string& base_dir, torch::TensorOptions options,
                                          const model::BaseQuantization& quantization = {});

}  // namespace nss::eval
