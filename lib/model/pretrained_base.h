// The frozen base a run starts from (model.from_pretrained), checked against
// the model it trains: config.json's shape and every base tensor with the
// shape that shape implies and a floating-point dtype. One check for the
// preflight (structure only, before the verdict) and for loading. Plain C++.
#pragma once

#include <memory>

#include "config/config.h"
#include "hf/pretrained_directory.h"

namespace nss::model {

/// Opens model.from_pretrained (every weight file's header and size checked
/// on open) and requires config.json's shape to be `model`'s and every base
/// parameter of (model, lora) to be present with its shape. DataError (exit
/// 4) naming the file and the tensor otherwise. Values are not read here: each
/// rank's reads check the slices it loads (hf::SafetensorsFile::read_float32).
std::shared_ptr<const hf::PretrainedDirectory> open_pretrained_base(
    const config::ModelConfig& model, const config::LoraConfig& lora);

}  // namespace nss::model
