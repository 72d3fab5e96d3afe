// The normalizer of a tokenizer.json: how text is rewritten before it is
// pre-tokenized. Supported, as Hugging Face `tokenizers` applies them:
// Sequence, NFC, NFD, NFKC, NFKD (ICU's normalisers), Lowercase (each code
// point's full lower-case mapping, as Rust's char::to_lowercase), Strip
// (Unicode White_Space at either end), StripAccents (drops combining marks),
// Prepend, Replace (a String or a Regex pattern), ByteLevel and
// BertNormalizer (clean_text, handle_chinese_chars, strip_accents,
// lowercase, with BERT's Unicode 8.0 character classes). Anything else
// (Precompiled SentencePiece charmaps, ...) is a DataError naming the file
// and the type.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tokenizer/pattern.h"

namespace nss::tokenizer {

class Normalizer {
 public:
  /// Builds the normalizer `spec` describes (null: none). An unsupported
  /// type or option is a DataError naming `origin`.
  static Normalizer from_json(const nlohmann::json& spec, const std::string& origin);

  /// True when there is nothing to apply.
  bool empty() const { return steps_.empty(); }

  /// `text` (valid UTF-8) normalized; the result is valid UTF-8.
  std::string apply(std::string text) const;

 private:
  struct Step {
    enum class Kind {
      kNfc,
      kNfd,
      kNfkc,
      kNfkd,
      kLowercase,
      kStrip,
      kStripAccents,
      kPrepend,
      kReplace,
      kByteLevel,
      kBertClean,
      kBertChinese,
      kBertStripAccents
    } kind;
    bool left = false, right = false;  // kStrip
    std::string text;                  // kPrepend, kReplace's content
    Pattern pattern;                   // kReplace: what it replaces
  };

  void add(const nlohmann::json& spec, const std::string& origin);
  void add_bert(const nlohmann::json& spec);
  static std::string apply(const Step& step, std::string text);

  std::vector<Step> steps_;
};

}  // namespace nss::tokenizer
