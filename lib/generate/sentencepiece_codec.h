// A SentencePiece tokenizer.model (Llama 2, Mistral) as a TextCodec, read
// through libnss_sentencepiece_bridge.so, which is loaded at run time with
// its symbols kept apart from libtorch's (tokenizer/sentencepiece_bridge.h).
#pragma once

#include <memory>
#include <string>

#include "generate/text_codec.h"

namespace nss::generate {

/// The codec of `model_file`: prompts get the model's BOS first, as Llama's
/// tokenizers add it; decoding leaves control pieces out. Sequences end at
/// the eos_token_id `model_dir` configures (end_ids.h), else the model's EOS
/// piece. DataError (exit 4) when the file is not a SentencePiece model;
/// InternalError when the bridge library cannot be loaded.
std::unique_ptr<TextCodec> open_sentencepiece_codec(const std::string& model_file,
                                                    const std::string& model_dir);

}  // namespace nss::generate
