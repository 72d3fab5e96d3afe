#include "tokenizer/added_tokens.h"

#include <algorithm>

#include "core/error.h"
#include "core/utf8.h"
#include "tokenizer/whitespace.h"

namespace nss::tokenizer {
namespace {

// Byte offset where the whitespace at the end of `text` starts.
size_t trailing_space_start(std::string_view text) {
  size_t start = text.size();
  for (size_t pos = 0; pos < text.size();) {
    const size_t at = pos;
    if (!is_whitespace(next_code_point(text, pos))) {
      start = text.size();
    } else if (start == text.size()) {
      start = at;
    }
  }
  return start;
}

// Bytes of whitespace at the start of `text`.
size_t leading_space_length(std::string_view text) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t next = pos;
    if (!is_whitespace(next_code_point(text, next))) break;
    pos = next;
  }
  return pos;
}

}  // namespace

AddedVocabulary AddedVocabulary::from_json(const nlohmann::json& tokens,
                                           const Normalizer& normalizer,
                                           const std::string& origin) {
  AddedVocabulary vocabulary;
  if (tokens.is_null()) return vocabulary;
  for (const auto& spec : tokens) {
    AddedToken token;
    token.id = spec.at("id").get<int32_t>();
    token.content = spec.at("content").get<std::string>();
    token.special = spec.value("special", false);
    token.lstrip = spec.value("lstrip", false);
    token.rstrip = spec.value("rstrip", false);
    token.normalized = spec.value("normalized", !token.special);
    if (spec.value("single_word", false)) {
      throw DataError("tokenizer", origin + ": added token " + token.content +
                                       " has single_word: true, which is not supported");
    }
    if (token.id < 0) {
      throw DataError("tokenizer",
                      origin + ": added token " + token.content + " has a negative id");
    }
    const size_t index = vocabulary.tokens_.size();
    vocabulary.by_content_.emplace(token.content, index);
    vocabulary.by_id_[token.id] = index;
    vocabulary.id_bound_ = std::max(vocabulary.id_bound_, token.id + 1);
    std::string pattern =
        token.normalized ? normalizer.apply(utf8_lossy(token.content)) : token.content;
    if (!pattern.empty()) {
      Matcher& matcher = token.normalized ? vocabulary.normalized_ : vocabulary.raw_;
      matcher[static_cast<unsigned char>(pattern[0])].push_back(index);
      vocabulary.has_normalized_ |= token.normalized;
    }
    vocabulary.patterns_.push_back(std::move(pattern));
    vocabulary.tokens_.push_back(std::move(token));
  }
  for (Matcher* matcher : {&vocabulary.raw_, &vocabulary.normalized_}) {
    for (auto& candidates : *matcher) {
      std::stable_sort(candidates.begin(), candidates.end(), [&](size_t a, size_t b) {
        return vocabulary.patterns_[a].size() > vocabulary.patterns_[b].size();
      });
    }
  }
  return vocabulary;
}

void AddedVocabulary::split_pass(const Matcher& matcher, const std::string& text, bool at_start,
                                 std::vector<TextPart>& parts) const {
  size_t emitted = 0;  // end of what has been emitted
  for (size_t pos = 0; pos < text.size();) {
    const AddedToken* found = nullptr;
    size_t length = 0;
    for (const size_t index : matcher[static_cast<unsigned char>(text[pos])]) {
      const std::string& pattern = patterns_[index];
      if (text.compare(pos, pattern.size(), pattern) == 0) {
        found = &tokens_[index];
        length = pattern.size();
        break;
      }
    }
    if (found == nullptr) {
      ++pos;
      continue;
    }
    size_t start = pos;
    size_t stop = pos + length;
    // The matcher resumes after the match itself, not after the whitespace
    // rstrip takes, as tokenizers' find_iter does.
    pos = stop;
    if (found->lstrip) {
      start = std::max(trailing_space_start(std::string_view(text).substr(0, start)), emitted);
    }
    if (found->rstrip) stop += leading_space_length(std::string_view(text).substr(stop));
    if (emitted < start)
      parts.push_back(
          {text.substr(emitted, start - emitted), std::nullopt, at_start && emitted == 0});
    parts.push_back({text.substr(start, stop - start), found->id, at_start && start == 0});
    emitted = stop;
  }
  if (emitted < text.size())
    parts.push_back({text.substr(emitted), std::nullopt, at_start && emitted == 0});
}

std::vector<TextPart> AddedVocabulary::split_raw(const std::string& text) const {
  std::vector<TextPart> parts;
  split_pass(raw_, text, true, parts);
  return parts;
}

void AddedVocabulary::split_normalized(const std::string& text, bool at_start,
                                       std::vector<TextPart>& parts) const {
  if (!has_normalized_) {
    if (!text.empty()) parts.push_back({text, std::nullopt, at_start});
    return;
  }
  split_pass(normalized_, text, at_start, parts);
}

std::optional<int32_t> AddedVocabulary::token_to_id(std::string_view content) const {
  const auto it = by_content_.find(std::string(content));
  if (it == by_content_.end()) return std::nullopt;
  return tokens_[it->second].id;
}

const AddedToken* AddedVocabulary::find(int32_t id) const {
  const auto it = by_id_.find(id);
  return it == by_id_.end() ? nullptr : &tokens_[it->second];
}

}  // namespace nss::tokenizer
