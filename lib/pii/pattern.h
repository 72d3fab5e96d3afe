// The regular expressions of PII detection: PCRE2 in UTF mode with Unicode
// properties (PCRE2_UTF | PCRE2_UCP), over any bytes (PCRE2_MATCH_INVALID_UTF:
// an invalid sequence matches nothing and offsets stay byte offsets, so
// replacement leaves every other byte as it was). lib/tokenizer's Regex
// emulates Oniguruma for tokenizer.json files; this one serves patterns we
// write, with flags and capture groups. Write [0-9], not \d: with UCP, \d
// takes every script's digits, which are not PII digits here.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace nss::pii {

enum PatternFlags : unsigned { kCaseless = 1, kDotAll = 2, kMultiline = 4 };

struct Match {
  std::size_t begin = 0, end = 0;  // the whole match, byte offsets
  /// Capture groups 1..n as [begin, end) byte offsets; {-1, -1} when unset.
  std::vector<std::pair<std::ptrdiff_t, std::ptrdiff_t>> groups;
};

class Pattern {
 public:
  /// Compiles `regex` once (JIT-compiled where PCRE2 has JIT) with `flags`
  /// (PatternFlags or-ed). Our patterns are fixed, so one PCRE2 rejects is a
  /// bug: InternalError naming `name`, PCRE2's message and the offset.
  Pattern(std::string_view regex, unsigned flags, std::string name);

  /// The successive non-overlapping, non-empty matches in `text` (any
  /// bytes), left to right; look-behinds see the text before each start.
  /// Text that makes PCRE2 give up (its match limit, 10,000,000) is a
  /// DataError naming the pattern; so for full_match.
  std::vector<Match> find_all(std::string_view text) const;

  /// Whether the whole of `text` matches (anchored at both ends).
  bool full_match(std::string_view text) const;

 private:
  struct Code;
  std::shared_ptr<const Code> code_;
};

}  // namespace nss::pii
