// A tokenizer.json pattern, {"String": "..."} or {"Regex": "..."}: what the
// Split pre-tokenizer cuts at (or a class of characters, for the fixed
// pre-tokenizers) and the Replace normalizer and decoder replace.
// Matches are non-overlapping, left to right, as `tokenizers` finds them.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace nss::tokenizer {

class Regex;

class Pattern {
 public:
  /// `spec` as tokenizer.json writes it; anything else is a DataError naming
  /// `what` (e.g. "Split pattern") and `origin`.
  static Pattern from_json(const nlohmann::json& spec, const std::string& what,
                           const std::string& origin);
  /// A pattern matching `literal` (empty: matches nothing).
  static Pattern literal(std::string literal);
  /// A pattern matching the regular expression (regex.h).
  static Pattern regex(std::shared_ptr<const Regex> regex);
  /// A pattern matching each code point, one at a time, that `matches`
  /// accepts (tokenizers' split on a char predicate).
  static Pattern characters(bool (*matches)(char32_t));

  /// Byte ranges [begin, end) of the matches in valid UTF-8 `text`.
  std::vector<std::pair<size_t, size_t>> find_all(const std::string& text) const;
  /// `text` with every match replaced by `content`.
  std::string replace(const std::string& text, const std::string& content) const;

 private:
  std::string literal_;
  std::shared_ptr<const Regex> regex_;
  bool (*matches_)(char32_t) = nullptr;
};

}  // namespace nss::tokenizer
