// The pre-tokenizer of a tokenizer.json: how text is cut into the pieces the
// model encodes one by one. Supported: Sequence, Split (Regex or String
// pattern, every behavior, invert), Digits, ByteLevel (add_prefix_space,
// use_regex with GPT-2's pattern), Metaspace (every prepend scheme, split or
// not), Punctuation, Whitespace, WhitespaceSplit, CharDelimiterSplit and
// BertPreTokenizer (whitespace removed, each punctuation character alone) —
// what the Llama, Mistral, Qwen, SmolLM, Gemma and BERT files use. Steps run in
// order on every piece, exactly as `tokenizers` runs them: after a ByteLevel
// step the pieces are in the byte-level alphabet.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tokenizer/pattern.h"

namespace nss::tokenizer {

/// What a Split does with the matches of its pattern (Hugging Face's
/// SplitDelimiterBehavior).
enum class SplitBehavior { kRemoved, kIsolated, kMergedWithPrevious, kMergedWithNext, kContiguous };

class PreTokenizer {
 public:
  /// Builds the pre-tokenizer `spec` describes (null: the text is one
  /// piece). An unsupported type or option is a DataError naming `origin`.
  static PreTokenizer from_json(const nlohmann::json& spec, const std::string& origin);

  /// Appends the non-empty pieces of valid UTF-8 `text` to `pieces`.
  /// `at_start`: the text begins the input (Metaspace's "first" scheme
  /// prepends only there, not after an added token).
  void split(const std::string& text, bool at_start, std::vector<std::string>& pieces) const;

 private:
  /// When Metaspace prepends its replacement (tokenizers' PrependScheme).
  enum class Prepend { kAlways, kFirst, kNever };

  struct Step {
    enum class Kind { kSplit, kPrefixSpace, kByteLevel, kMetaspace } kind;
    Pattern pattern;      // kSplit: what it cuts at
    std::string literal;  // kMetaspace's replacement
    SplitBehavior behavior = SplitBehavior::kIsolated;
    bool invert = false;
    Prepend prepend = Prepend::kAlways;  // kMetaspace
    bool split = true;                   // kMetaspace: cut before each replacement
  };
  struct Piece {
    std::string text;
    bool at_start;
  };

  void add(const nlohmann::json& spec, const std::string& origin);
  void add_split(Pattern pattern, SplitBehavior behavior, bool invert);
  void add_metaspace(const nlohmann::json& spec, const std::string& origin);
  static void split_piece(const Step& step, Piece& piece, std::vector<Piece>& out);
  static void apply(const Step& step, std::vector<Piece>& pieces);

  std::vector<Step> steps_;
};

}  // namespace nss::tokenizer
