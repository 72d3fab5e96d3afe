#include "tokenizer/vocabulary.h"

#include "core/error.h"

namespace nss::tokenizer {

Vocabulary Vocabulary::from_json(const nlohmann::json& vocab, const std::string& origin) {
  Vocabulary out;
  for (const auto& [token, id_json] : vocab.items()) {
    const int32_t id = id_json.get<int32_t>();
    if (id < 0) throw DataError("tokenizer", origin + ": token " + token + " has a negative id");
    out.ids_[token] = id;
    if (static_cast<size_t>(id) >= out.tokens_.size()) {
      out.tokens_.resize(id + 1);
      out.has_token_.resize(id + 1, false);
    }
    out.tokens_[id] = token;
    out.has_token_[id] = true;
  }
  return out;
}

const std::string* Vocabulary::token(int32_t id) const {
  if (id < 0 || id >= id_bound() || !has_token_[id]) return nullptr;
  return &tokens_[id];
}

}  // namespace nss::tokenizer
