// The model a scoring or generating tool was pointed at, whatever it is: a
// checkpoint step directory (read and verified, eval/checkpoint_model.h), a
// PEFT adapter directory over --base (eval/peft_adapter.h), or a Hugging
// Face model directory. One place decides which, for nss_eval and
// nss_generate alike.
#pragma once

#include <string>

#include <nlohmann/json.hpp>
#include <torch/types.h>

#include "eval/quantize_request.h"
#include "model/llama_model.h"

namespace nss::eval {

/// What a tool was pointed at: --model, --base and --quantize/--double-quant.
struct ModelSource {
  std::string path;  // a Hugging Face directory, a checkpoint step or a PEFT adapter
  std::string base;  // the adapter's base model directory; empty: not given
  QuantizeRequest quantize;
};

struct InferenceModel {
  model::LlamaModel model;
  /// The Hugging Face directory the base weights came from (its tokenizer
  /// and generation_config.json go with the model); empty for a step
  /// trained from a random initialisation.
  std::string pretrained_dir;
  /// A step's record of its training data (state.dataset); null otherwise.
  nlohmann::json dataset;
  /// A private step's plan (state.privacy); null otherwise.
  nlohmann::json privacy;
};

/// Loads `source` with `options`. UsageError (exit 2) for an adapter without
/// --base or --base with something else, and for a quantisation the model has
/// no frozen base for; otherwise the loaders' errors.
InferenceModel load_inference_model(const ModelSource& source, torch::TensorOptions options);

}  // namespace nss::eval
