// Text in and out of a generating model: which tokenizer to use, how a
// prompt becomes ids, and which ids end a sequence. nss_generate resolves the
// tokenizer in this order: --tokenizer (a tokenizer.json, a SentencePiece
// tokenizer.model read through a bridge library, see sentencepiece_codec.h,
// or a directory holding one), else the one a checkpoint step's training
// data was tokenised with (state.dataset: "byte-level", or "hf:<tokenizer.json>"
// with its SHA-256), else the one beside the model's weights (the model
// directory, or a checkpoint step's model.from_pretrained), else the built-in
// byte-level tokenizer when the vocabulary is its 258; otherwise UsageError
// (exit 2).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace nss::generate {

class TextCodec {
 public:
  virtual ~TextCodec() = default;
  /// The prompt's ids as the tokenizer's encode(text, add_special_tokens)
  /// gives them (transformers' tokenizer(prompt)); byte-level: BOS + bytes,
  /// as training data stores a document.
  virtual std::vector<std::int64_t> encode_prompt(const std::string& text) const = 0;
  /// The ids of `text` alone, no special token added: how data preparation
  /// tokenises an example's prompt and completion (docs/data.md).
  virtual std::vector<std::int64_t> encode_plain(const std::string& text) const = 0;
  /// The text of generated ids (special tokens left out).
  virtual std::string decode(const std::vector<std::int64_t>& ids) const = 0;
  /// What each id adds to decoded text, by id: as the first generated
  /// token (`first`) or after another; nullopt for ids decode leaves out
  /// (special and control tokens). Byte tokens are their byte, even where
  /// alone it is no character. UsageError (exit 2) naming --constrain none
  /// when the tokenizer cannot say.
  virtual std::vector<std::optional<std::string>> token_bytes(bool first) const = 0;
  /// What the codec is, for messages: "tokenizer.json at PATH", ...
  virtual std::string description() const = 0;
  /// Ids that end a sequence (EOS).
  const std::vector<std::int64_t>& end_ids() const { return end_ids_; }
  /// Ends sequences at `id` too (the EOS the training data used).
  void also_end_at(std::int64_t id);

 protected:
  std::vector<std::int64_t> end_ids_;
};

/// Where a model's tokenizer may be found, in the order they are tried.
struct TokenizerSources {
  std::string flag;            // --tokenizer; empty: not given
  std::string trained_with;    // the step's state.dataset.tokenizer; empty: none
  std::string trained_sha256;  // its state.dataset.tokenizer_sha256; empty: unknown
  std::string model_dir;       // where the weights come from; empty: none
  std::int64_t vocab_size = 0;
};

/// The codec for `sources`. A tokenizer.json the training data names is
/// used when it still has its SHA-256; when it has moved or changed, the
/// model directory's is used if it has that SHA-256, else UsageError. EOS
/// ids come from the model directory's generation_config.json or
/// config.json (eos_token_id, a number or a list), else the tokenizer's own.
std::unique_ptr<TextCodec> open_text_codec(const TokenizerSources& sources);

}  // namespace nss::generate
