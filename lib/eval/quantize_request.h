// --quantize of nss_eval and nss_generate: score and sample a model with the
// base a QLoRA run computed with. One place turns the request and what a
// checkpoint step says of its run into the values the model is loaded with.
#pragma once

#include <string>

#include "config/config.h"
#include "model/llama_model.h"

namespace nss::eval {

struct QuantizeRequest {
  /// "auto": a step as its run trained it (NF4 for a QLoRA step), any other
  /// model as read; "none": as read; "nf4": the projections round-tripped.
  std::string mode = "auto";
  /// With "nf4": double quantisation (a step's own setting applies anyway).
  bool double_quant = false;
};

/// UsageError (exit 2) for a mode other than auto, none and nf4, or
/// --double-quant without nf4 / auto.
void check_quantize_request(const QuantizeRequest& request);

/// The base quantisation to load with; `trained`: the LoRA settings of the
/// step's run (nullptr for a Hugging Face or PEFT directory).
model::BaseQuantization resolve_quantization(const QuantizeRequest& request,
                                             const config::LoraConfig* trained);

/// "NF4", "NF4 with double quantisation" or "unquantised", for logs.
std::string describe(const model::BaseQuantization& quantization);

}  // namespace nss::eval
