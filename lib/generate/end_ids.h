// The ids that end a sequence as a model directory configures them, shared
// by the tokenizer codecs of text_codec.cpp and sentencepiece_codec.cpp.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "generate/text_codec.h"

namespace nss::generate {

/// eos_token_id of a model directory's generation_config.json, else
/// config.json (a number or a list); empty when neither names one.
std::vector<std::int64_t> configured_end_ids(const std::string& model_dir);

/// `codec` ending at the ids `model_dir` configures, else at `own_end_ids`.
template <class Codec>
std::unique_ptr<TextCodec> with_end_ids(std::unique_ptr<Codec> codec, const std::string& model_dir,
                                        std::vector<std::int64_t> own_end_ids) {
  auto ids = configured_end_ids(model_dir);
  codec->set_end_ids(ids.empty() ? std::move(own_end_ids) : std::move(ids));
  return codec;
}

}  // namespace nss::generate
