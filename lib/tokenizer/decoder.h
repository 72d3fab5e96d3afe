// The decoder of a tokenizer.json: how tokens become text again. Supported,
// as Hugging Face `tokenizers` chains them (each step maps the list of token
// strings, the last list is joined): Sequence, ByteLevel, Replace (String or
// Regex), ByteFallback (<0xXX> tokens to bytes), Fuse, Strip, Metaspace and
// WordPiece (BERT's: "##" pieces glued on, the others after a space, and
// tokenizers' cleanup of spaces before punctuation and contractions).
// No decoder joins the tokens with spaces. Anything else is a DataError
// naming the file and the type.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tokenizer/pattern.h"

namespace nss::tokenizer {

class Decoder {
 public:
  /// Builds the decoder `spec` describes (null: tokens joined with spaces).
  static Decoder from_json(const nlohmann::json& spec, const std::string& origin);

  /// The text of `tokens` (the vocabulary's strings, in order), valid UTF-8.
  std::string decode(std::vector<std::string> tokens) const;

  /// The same with byte tokens and byte-level characters as the bytes they
  /// stand for, even where those do not form characters (decode() puts
  /// replacement characters there): what one token adds to a text.
  std::string decode_bytes(std::vector<std::string> tokens) const;

  /// False when what a token decodes to depends on more than whether it is
  /// first (WordPiece's cleanup joins a token to its neighbour).
  bool tokens_decode_alone() const;

 private:
  struct Step {
    enum class Kind {
      kByteLevel,
      kReplace,
      kByteFallback,
      kFuse,
      kStrip,
      kMetaspace,
      kWordPiece
    } kind;
    std::string literal;         // kStrip's and kMetaspace's character, kWordPiece's prefix
    Pattern pattern;             // kReplace: what it replaces
    std::string content;         // kReplace: with what
    size_t start = 0, stop = 0;  // kStrip: at most this many at each end
    bool prepend = true;         // kMetaspace: the first token's replacement is no space
    bool cleanup = false;        // kWordPiece
  };

  void add(const nlohmann::json& spec, const std::string& origin);
  std::string run(std::vector<std::string> tokens, bool raw) const;
  static std::vector<std::string> apply(const Step& step, std::vector<std::string> tokens,
                                        bool raw);

  std::vector<Step> steps_;
  bool joined_with_spaces_ = true;
};

}  // namespace nss::tokenizer
