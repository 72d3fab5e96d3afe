#include "tokenizer/wordpiece_model.h"

#include <algorithm>

#include "core/error.h"
#include "core/utf8.h"

namespace nss::tokenizer {
namespace {

bool continuation_byte(char c) {
  return (static_cast<unsigned char>(c) & 0xC0) == 0x80;
}

}  // namespace

WordPieceModel WordPieceModel::from_json(const nlohmann::json& spec, const std::string& origin) {
  WordPieceModel model;
  model.origin_ = origin;
  model.unk_token_ = spec.value("unk_token", model.unk_token_);
  model.prefix_ = spec.value("continuing_subword_prefix", model.prefix_);
  model.max_chars_ = spec.value("max_input_chars_per_word", model.max_chars_);
  model.vocab_ = Vocabulary::from_json(spec.at("vocab"), origin);
  for (const auto& entry : model.vocab_.entries())
    model.longest_token_ = std::max(model.longest_token_, entry.first.size());
  return model;
}

std::optional<std::pair<int32_t, size_t>> WordPieceModel::longest_match(
    std::string_view word, size_t start, std::string& candidate) const {
  const size_t affix = start > 0 ? prefix_.size() : 0;
  if (affix >= longest_token_) return std::nullopt;
  // Candidates longer than every entry are skipped: they cannot match, and
  // the search stays linear in the entry length, not the word's.
  for (size_t end = std::min(word.size(), start + (longest_token_ - affix)); end > start; --end) {
    if (end < word.size() && continuation_byte(word[end])) continue;
    candidate.assign(start > 0 ? prefix_ : std::string());
    candidate.append(word.substr(start, end - start));
    if (const auto id = vocab_.find(candidate)) return std::make_pair(*id, end);
  }
  return std::nullopt;
}

int32_t WordPieceModel::unk_id() const {
  const auto id = vocab_.find(unk_token_);
  if (!id)
    throw DataError("tokenizer", origin_ + ": WordPiece unk_token \"" + unk_token_ +
                                     "\" is not in the vocabulary, and a word needs it");
  return *id;
}

void WordPieceModel::encode(std::string_view word, std::vector<int32_t>& ids) const {
  if (count_utf8_characters(word) > max_chars_) {
    ids.push_back(unk_id());
    return;
  }
  const size_t first = ids.size();
  std::string candidate;
  for (size_t start = 0; start < word.size();) {
    const auto match = longest_match(word, start, candidate);
    if (!match) {
      // A word is whole or the unk token alone.
      ids.resize(first);
      ids.push_back(unk_id());
      return;
    }
    ids.push_back(match->first);
    start = match->second;
  }
}

std::optional<int32_t> WordPieceModel::token_to_id(std::string_view token) const {
  return vocab_.find(token);
}

const std::string* WordPieceModel::id_to_token(int32_t id) const {
  return vocab_.token(id);
}

}  // namespace nss::tokenizer
