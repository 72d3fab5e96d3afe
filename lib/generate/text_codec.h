// Text in and out of a generating model: which tokenizer to use, how a
// prompt becomes ids, and which ids end a sequence. nss_generate resolves the
// tokenizer in this order: --tokenizer (a tokenizer.json or a directory
// holding one; a SentencePiece tokenizer.model is refused for now, see
// text_codec.cpp), else the one beside the
// model's weights (the model directory, or a checkpoint step's
// model.from_pretrained), else the built-in byte-level tokenizer when the
// vocabulary is its 258; otherwise UsageError (exit 2).
#pragma once

#include <cstdint>
#include <memory>
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
  /// The text of generated ids (special tokens left out).
  virtual std::string decode(const std::vector<std::int64_t>& ids) const = 0;
  /// What the codec is, for messages: "tokenizer.json at PATH", ...
  virtual std::string description() const = 0;
  /// Ids that end a sequence (EOS).
  const std::vector<std::int64_t>& end_ids() const { return end_ids_; }

 protected:
  std::vector<std::int64_t> end_ids_;
};

/// The codec for a model with `vocab_size` tokens whose weights come from
/// `model_dir` (empty: none, e.g. a checkpoint of a randomly initialised
/// model); `tokenizer` is --tokenizer (empty: not given). EOS ids come from
/// the model directory's generation_config.json or config.json
/// (eos_token_id, a number or a list), else the tokenizer's own.
std::unique_ptr<TextCodec> open_text_codec(const std::string& tokenizer,
                                           const std::string& model_dir, std::int64_t vocab_size);

}  // namespace nss::generate
