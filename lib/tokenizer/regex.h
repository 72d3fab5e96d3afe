// A PCRE2 regular expression over UTF-8 text with Unicode properties
// (PCRE2_UTF | PCRE2_UCP, JIT-compiled when the library supports it), for the
// Split and ByteLevel pre-tokenizers. Hugging Face `tokenizers` uses
// Oniguruma; the patterns tokenizer.json files carry (GPT-2's, Llama 3's)
// mean the same in both once \s is read as Oniguruma reads it (regex.cpp).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace nss::tokenizer {

class Regex {
 public:
  /// Compiles `pattern`; a pattern PCRE2 rejects is a DataError that names
  /// `origin` (the tokenizer file) and PCRE2's message.
  Regex(const std::string& pattern, const std::string& origin);

  /// Byte ranges [begin, end) of the successive non-overlapping matches in
  /// valid UTF-8 `text`. After an empty match the search resumes one code
  /// point later, as Oniguruma's find_iter does. Text PCRE2 gives up on
  /// (its match limit) is a DataError.
  std::vector<std::pair<size_t, size_t>> find_all(std::string_view text) const;

 private:
  struct Code;
  std::shared_ptr<const Code> code_;
};

}  // namespace nss::tokenizer
