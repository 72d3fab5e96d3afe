// A SentencePiece model (tokenizer.model, as Llama 2 and Mistral ship it)
// through Debian's libsentencepiece, with the interface of Tokenizer: the
// ids and text of the SentencePiece library itself (tests/tokenizer checks
// them against the Python sentencepiece package and against Hugging Face
// `tokenizers`' conversion of the same file).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sentencepiece {
class SentencePieceProcessor;
}

namespace nss::tokenizer {

class SentencePieceTokenizer {
 public:
  /// Loads `path`; DataError (exit 4) naming the file when it is missing or
  /// not a SentencePiece model.
  static SentencePieceTokenizer from_file(const std::string& path);

  /// The ids of `text`; with `add_special_tokens`, the model's BOS first (as
  /// Llama's tokenizers add it).
  std::vector<int32_t> encode(std::string_view text, bool add_special_tokens) const;

  /// The text of `ids`; control pieces (BOS, EOS, ...) are always left out,
  /// as SentencePiece decodes them; ids outside the vocabulary are skipped.
  std::string decode(const std::vector<int32_t>& ids) const;

  /// The number of pieces.
  int32_t vocab_size() const;

  /// The id of `piece`, when the model has it.
  std::optional<int32_t> token_to_id(std::string_view piece) const;

  /// The model's BOS and EOS ids (-1 when it has none).
  int32_t bos_id() const;
  int32_t eos_id() const;

 private:
  explicit SentencePieceTokenizer(std::shared_ptr<const sentencepiece::SentencePieceProcessor> p)
      : processor_(std::move(p)) {}

  std::shared_ptr<const sentencepiece::SentencePieceProcessor> processor_;
};

}  // namespace nss::tokenizer
