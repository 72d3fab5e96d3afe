// The pre-tokenizer of a tokenizer.json: how text is cut into the pieces the
// BPE model encodes one by one. Supported: Sequence, Split (Regex or String
// pattern, every behavior, invert), Digits and ByteLevel (add_prefix_space,
// use_regex with GPT-2's pattern) — what Llama 3 and SmolLM2 use. Steps run
// in order on every piece, exactly as `tokenizers` runs them: after a
// ByteLevel step the pieces are in the byte-level alphabet.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace nss::tokenizer {

class Regex;

/// What a Split does with the matches of its pattern (Hugging Face's
/// SplitDelimiterBehavior).
enum class SplitBehavior { kRemoved, kIsolated, kMergedWithPrevious, kMergedWithNext, kContiguous };

class PreTokenizer {
 public:
  /// Builds the pre-tokenizer `spec` describes (null: the text is one
  /// piece). An unsupported type or option is a DataError naming `origin`.
  static PreTokenizer from_json(const nlohmann::json& spec, const std::string& origin);

  /// Appends the non-empty pieces of valid UTF-8 `text` to `pieces`.
  void split(const std::string& text, std::vector<std::string>& pieces) const;

 private:
  struct Step {
    enum class Kind { kSplit, kPrefixSpace, kByteLevel } kind;
    std::shared_ptr<const Regex> regex;  // kSplit with a regular expression
    std::string literal;                 // kSplit with a String pattern
    SplitBehavior behavior = SplitBehavior::kIsolated;
    bool invert = false;
  };

  void add(const nlohmann::json& spec, const std::string& origin);
  static void apply(const Step& step, std::vector<std::string>& pieces);

  std::vector<Step> steps_;
};

}  // namespace nss::tokenizer
