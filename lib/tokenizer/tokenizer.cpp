#include "tokenizer/tokenizer.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/utf8.h"
#include "tokenizer/added_tokens.h"
#include "tokenizer/decoder.h"
#include "tokenizer/model.h"
#include "tokenizer/normalizer.h"
#include "tokenizer/post_processor.h"
#include "tokenizer/pre_tokenizer.h"

namespace nss::tokenizer {

struct Tokenizer::Parts {
  Normalizer normalizer;
  AddedVocabulary added;
  PreTokenizer pre_tokenizer;
  std::unique_ptr<const Model> model;
  PostProcessor post_processor;
  Decoder decoder;
};

Tokenizer Tokenizer::from_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw DataError("tokenizer", "cannot read tokenizer file " + path,
                    "point at a model directory's tokenizer.json");
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw DataError("tokenizer", "cannot read tokenizer file " + path);
  return from_json_text(text.str(), path);
}

Tokenizer Tokenizer::from_json_text(const std::string& json_text, const std::string& origin) {
  auto parts = std::make_shared<Parts>();
  try {
    const auto json = nlohmann::json::parse(json_text);
    parts->normalizer = Normalizer::from_json(json.value("normalizer", nlohmann::json()), origin);
    parts->model = Model::from_json(json.at("model"), origin);
    parts->added = AddedVocabulary::from_json(json.value("added_tokens", nlohmann::json()),
                                              parts->normalizer, origin);
    parts->pre_tokenizer =
        PreTokenizer::from_json(json.value("pre_tokenizer", nlohmann::json()), origin);
    parts->post_processor =
        PostProcessor::from_json(json.value("post_processor", nlohmann::json()), origin);
    parts->decoder = Decoder::from_json(json.value("decoder", nlohmann::json()), origin);
  } catch (const nlohmann::json::exception& e) {
    throw DataError("tokenizer", origin + " is not a valid tokenizer.json: " + e.what());
  }
  return Tokenizer(std::move(parts));
}

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool add_special_tokens) const {
  std::vector<int32_t> ids;
  std::vector<std::string> pieces;
  std::vector<TextPart> normalized_parts;
  for (const auto& raw : parts_->added.split_raw(utf8_lossy(text))) {
    if (raw.id) {
      ids.push_back(*raw.id);
      continue;
    }
    normalized_parts.clear();
    parts_->added.split_normalized(parts_->normalizer.apply(raw.text), raw.at_start,
                                   normalized_parts);
    for (const auto& part : normalized_parts) {
      if (part.id) {
        ids.push_back(*part.id);
        continue;
      }
      pieces.clear();
      parts_->pre_tokenizer.split(part.text, part.at_start, pieces);
      for (const auto& piece : pieces) parts_->model->encode(piece, ids);
    }
  }
  return add_special_tokens ? parts_->post_processor.apply(std::move(ids)) : ids;
}

std::string Tokenizer::decode(const std::vector<int32_t>& ids, bool skip_special_tokens) const {
  std::vector<std::string> tokens;
  tokens.reserve(ids.size());
  for (const int32_t id : ids) {
    const AddedToken* added = parts_->added.find(id);
    const std::string* token = added ? &added->content : parts_->model->id_to_token(id);
    if (token == nullptr) continue;
    if (skip_special_tokens) {
      // tokenizers asks whether the token's text is a special token's.
      const auto special_id = parts_->added.token_to_id(*token);
      if (special_id && parts_->added.find(*special_id)->special) continue;
    }
    tokens.push_back(*token);
  }
  return parts_->decoder.decode(std::move(tokens));
}

std::vector<std::optional<std::string>> Tokenizer::token_bytes(bool first) const {
  const Decoder& decoder = parts_->decoder;
  if (!decoder.tokens_decode_alone())
    throw DataError("tokenizer",
                    "this tokenizer's decoder joins a token's text to its neighbours "
                    "(WordPiece cleanup), so a token's text cannot be known alone");
  std::vector<const std::string*> strings(static_cast<std::size_t>(vocab_size()), nullptr);
  for (int32_t id = 0; id < vocab_size(); ++id) {
    const AddedToken* added = parts_->added.find(id);
    if (added && added->special) continue;
    strings[id] = added ? &added->content : parts_->model->id_to_token(id);
  }
  // After another token: decoded behind a plain one, whose own bytes are cut
  // off again (a Strip or Metaspace decoder treats only the first specially).
  std::string anchor, anchor_bytes;
  for (const std::string* s : strings) {
    if (!s) continue;
    const std::string alone = decoder.decode_bytes({*s});
    if (alone.size() == 1 && std::isalnum(static_cast<unsigned char>(alone[0]))) {
      anchor = *s;
      anchor_bytes = alone;
      break;
    }
  }
  if (!first && anchor.empty())
    throw DataError("tokenizer", "no token decodes to a single letter or digit",
                    "the vocabulary is too unusual to know what a token adds after another");
  std::vector<std::optional<std::string>> out(strings.size());
  for (std::size_t id = 0; id < strings.size(); ++id) {
    if (!strings[id]) continue;
    if (first) {
      out[id] = decoder.decode_bytes({*strings[id]});
      continue;
    }
    const std::string both = decoder.decode_bytes({anchor, *strings[id]});
    if (both.compare(0, anchor_bytes.size(), anchor_bytes) != 0)
      throw DataError("tokenizer", "the decoder changes the token before another one",
                      "the text a token adds after another cannot be known alone");
    out[id] = both.substr(anchor_bytes.size());
  }
  return out;
}

int32_t Tokenizer::vocab_size() const {
  return std::max(parts_->model->id_bound(), parts_->added.id_bound());
}

std::optional<int32_t> Tokenizer::token_to_id(std::string_view token) const {
  if (const auto id = parts_->added.token_to_id(token)) return id;
  return parts_->model->token_to_id(token);
}

}  // namespace nss::tokenizer
