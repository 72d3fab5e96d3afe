#include "tokenizer/model.h"

#include "core/error.h"
#include "tokenizer/bpe_model.h"
#include "tokenizer/wordpiece_model.h"

namespace nss::tokenizer {

std::unique_ptr<const Model> Model::from_json(const nlohmann::json& spec,
                                              const std::string& origin) {
  const std::string type = spec.at("type").get<std::string>();
  if (type == "BPE") return std::make_unique<BpeModel>(BpeModel::from_json(spec, origin));
  if (type == "WordPiece")
    return std::make_unique<WordPieceModel>(WordPieceModel::from_json(spec, origin));
  throw DataError("tokenizer", origin + ": model type \"" + type + "\" is not supported",
                  "supported: BPE (Llama, Mistral, Qwen, SmolLM, Gemma), WordPiece (BERT); "
                  "prepare the data with scripts/prepare_data_hf.py instead");
}

}  // namespace nss::tokenizer
