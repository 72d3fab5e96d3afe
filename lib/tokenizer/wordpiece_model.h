// The WordPiece model of a tokenizer.json (BERT's): each pre-tokenized word
// is cut greedily into the longest vocabulary entries from its start, every
// entry after the first carrying the continuing-subword prefix ("##"). A
// word that cannot be cut all the way, or longer than
// max_input_chars_per_word characters, is the unk token alone, as in
// Hugging Face `tokenizers`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "tokenizer/model.h"
#include "tokenizer/vocabulary.h"

namespace nss::tokenizer {

class WordPieceModel final : public Model {
 public:
  /// Builds the model from tokenizer.json's "model" (type WordPiece):
  /// vocab, unk_token, continuing_subword_prefix, max_input_chars_per_word
  /// (each absent one at tokenizers' default).
  static WordPieceModel from_json(const nlohmann::json& spec, const std::string& origin);

  /// Appends the ids of one word. A word that needs the unk token while the
  /// vocabulary lacks it is a DataError, as tokenizers fails there too.
  void encode(std::string_view word, std::vector<int32_t>& ids) const override;

  std::optional<int32_t> token_to_id(std::string_view token) const override;
  const std::string* id_to_token(int32_t id) const override;
  int32_t id_bound() const override { return vocab_.id_bound(); }

 private:
  // The id of the longest entry that `word` has at `start` (bytes), and
  // where that entry ends.
  std::optional<std::pair<int32_t, size_t>> longest_match(std::string_view word, size_t start,
                                                          std::string& candidate) const;
  int32_t unk_id() const;

  Vocabulary vocab_;
  std::string unk_token_ = "[UNK]";
  std::string prefix_ = "##";
  size_t max_chars_ = 100;
  size_t longest_token_ = 0;  // bytes: no longer candidate can match
  std::string origin_;
};

}  // namespace nss::tokenizer
