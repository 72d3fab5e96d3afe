// The BPE model of a tokenizer.json: vocabulary, ranked merges and the
// merge loop of Hugging Face `tokenizers` (lowest rank first, leftmost among
// equal ranks), so a piece encodes to the same ids.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <nlohmann/json.hpp>

#include "tokenizer/model.h"
#include "tokenizer/vocabulary.h"

namespace nss::tokenizer {

class BpeModel final : public Model {
 public:
  /// Builds the model from tokenizer.json's "model" (type BPE), with
  /// byte_fallback (a character outside the vocabulary becomes its bytes'
  /// <0xXX> tokens). Options that change the result and are not implemented
  /// (dropout, a continuing_subword_prefix or end_of_word_suffix) and merges
  /// of tokens outside the vocabulary are a DataError naming `origin`.
  static BpeModel from_json(const nlohmann::json& spec, const std::string& origin);

  /// Appends the ids of one pre-tokenized piece to `ids`.
  void encode(std::string_view piece, std::vector<int32_t>& ids) const override;

  std::optional<int32_t> token_to_id(std::string_view token) const override;
  const std::string* id_to_token(int32_t id) const override;
  int32_t id_bound() const override { return vocab_.id_bound(); }

  /// Rank and result of merging `left` and `right`, if a merge exists.
  struct Merge {
    int32_t rank;
    int32_t id;
  };
  std::optional<Merge> merge(int32_t left, int32_t right) const;

 private:
  static uint64_t pair_key(int32_t left, int32_t right) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) |
           static_cast<uint32_t>(right);
  }

  // Pieces from this many bytes on are cut where no merge can reach across.
  static constexpr size_t kLongPiece = 256;

  // Records which characters stand side by side in `token`.
  void note_adjacent_characters(const std::string& token);
  // The merge loop over one word.
  void encode_word(std::string_view piece, std::vector<int32_t>& ids) const;

  // Appends the <0xXX> tokens of `character`'s bytes through `add` when the
  // vocabulary has all of them.
  template <typename Add>
  bool add_fallback_bytes(std::string_view character, const Add& add) const;

  Vocabulary vocab_;
  std::unordered_map<uint64_t, Merge> merges_;
  std::unordered_set<uint64_t> adjacent_;  // code point pairs side by side in some token
  std::optional<int32_t> unk_id_;
  bool fuse_unk_ = false;
  bool ignore_merges_ = false;
  bool byte_fallback_ = false;
  std::array<int32_t, 256> byte_ids_{};  // each byte's <0xXX> token, -1 when absent
};

}  // namespace nss::tokenizer
