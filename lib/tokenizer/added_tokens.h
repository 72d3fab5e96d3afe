// The added tokens of a tokenizer.json (special tokens such as <|im_start|>
// and user-added ones): the text is split on them before pre-tokenization,
// leftmost-longest, with their lstrip/rstrip flags, first on the tokens
// matched in the raw text (normalized: false), then, once the rest is
// normalized, on the others (their content normalized too), as Hugging
// Face's AddedVocabulary does.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "tokenizer/normalizer.h"

namespace nss::tokenizer {

struct AddedToken {
  int32_t id = 0;
  std::string content;
  bool special = false;
  bool lstrip = false;
  bool rstrip = false;
  bool normalized = false;
};

/// A part of the input: an added token's id, or text still to be encoded.
/// `at_start`: the part begins the input.
struct TextPart {
  std::string text;
  std::optional<int32_t> id;
  bool at_start = false;
};

class AddedVocabulary {
 public:
  /// Reads tokenizer.json's "added_tokens"; the normalized ones are matched
  /// as `normalizer` writes them. single_word tokens are a DataError naming
  /// `origin` (not implemented).
  static AddedVocabulary from_json(const nlohmann::json& tokens, const Normalizer& normalizer,
                                   const std::string& origin);

  /// `text` (the raw input) cut at the tokens matched before normalization.
  std::vector<TextPart> split_raw(const std::string& text) const;
  /// A normalized part cut at the other tokens, appended to `parts`.
  void split_normalized(const std::string& text, bool at_start, std::vector<TextPart>& parts) const;

  std::optional<int32_t> token_to_id(std::string_view content) const;
  /// The added token with `id`, or nullptr.
  const AddedToken* find(int32_t id) const;
  /// Largest id + 1 (0 without added tokens).
  int32_t id_bound() const { return id_bound_; }

 private:
  // Token indices by first byte, longest first, for one matching pass.
  using Matcher = std::array<std::vector<size_t>, 256>;

  void split_pass(const Matcher& matcher, const std::string& text, bool at_start,
                  std::vector<TextPart>& parts) const;

  std::vector<AddedToken> tokens_;
  std::vector<std::string> patterns_;  // what each token matches: its content, maybe normalized
  std::unordered_map<std::string, size_t> by_content_;
  std::unordered_map<int32_t, size_t> by_id_;
  Matcher raw_;         // normalized: false
  Matcher normalized_;  // normalized: true
  bool has_normalized_ = false;
  int32_t id_bound_ = 0;
};

}  // namespace nss::tokenizer
