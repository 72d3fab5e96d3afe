// A Hugging Face tokenizer.json in C++, without libtorch or Python: BPE
// (byte-level or with byte fallback) and WordPiece models with the
// normalizers, pre-tokenizers, added and special tokens, post-processors and
// decoders the Llama, Mistral, Qwen, SmolLM, Gemma and BERT families' files
// use, giving the ids and text that `tokenizers` gives (tests/tokenizer
// checks this against it).
// What a file uses and this does not implement is a DataError naming the
// file and the feature, never a silent difference (docs/data.md).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nss::tokenizer {

class Tokenizer {
 public:
  /// Reads `path` (a tokenizer.json). Missing, unreadable, malformed or
  /// unsupported: DataError (exit 4) naming the file.
  static Tokenizer from_file(const std::string& path);

  /// Parses tokenizer.json text; `origin` names it in errors.
  static Tokenizer from_json_text(const std::string& json, const std::string& origin);

  /// The ids of `text`, as tokenizers' encode(text, add_special_tokens).
  /// Invalid UTF-8 becomes U+FFFD first, as Python's decoding with
  /// errors="replace" would make it.
  std::vector<int32_t> encode(std::string_view text, bool add_special_tokens) const;

  /// The text of `ids`, as tokenizers' decode: ids without a token are
  /// skipped, bytes that are not valid UTF-8 become U+FFFD.
  std::string decode(const std::vector<int32_t>& ids, bool skip_special_tokens) const;

  /// What each id adds to decoded text, by id: at the start of a text
  /// (`first`) or after other tokens. nullopt for a special token (decode
  /// leaves it out) and an id without a token. decode(ids) is ids[0]'s
  /// first bytes and the others' joined, made valid UTF-8. DataError when
  /// the decoder makes a token's text depend on its neighbours (WordPiece's
  /// cleanup).
  std::vector<std::optional<std::string>> token_bytes(bool first) const;

  /// The size an embedding table needs: the largest id + 1.
  int32_t vocab_size() const;

  /// The id of `token` (an added token first, then the model's vocabulary).
  std::optional<int32_t> token_to_id(std::string_view token) const;

 private:
  struct Parts;
  explicit Tokenizer(std::shared_ptr<const Parts> parts) : parts_(std::move(parts)) {}

  std::shared_ptr<const Parts> parts_;
};

}  // namespace nss::tokenizer
