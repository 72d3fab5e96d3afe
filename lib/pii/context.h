// The words around a detected span that make a weak pattern count: the last
// few word tokens before it (Presidio's five-word prefix, matched as whole
// tokens, not substrings: "tin" is no context in "continue"), the column's
// header tokens (Presidio's analyze(context=...)), and NSS's character
// windows on both sides of a phone number.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace nss::pii {

/// Context terms of one recognizer: single words ("ssn") and phrases of
/// words separated by one space ("soc sec"), lowercase.
using ContextTerms = std::vector<std::string_view>;

/// The last `count` word tokens of `cell[0:begin]` within its sentence
/// (context does not reach back past "on file. "), ASCII-lowercased, in
/// reading order. A token is a run of ASCII letters and digits, "#" and
/// bytes of non-ASCII characters (most are letters in the text we scan).
std::vector<std::string> words_before(std::string_view cell, std::size_t begin,
                                      std::size_t count = 5);

/// The word tokens of `cell[from:to]`, ASCII-lowercased.
std::vector<std::string> words_between(std::string_view cell, std::size_t from, std::size_t to);

/// Whether a term is among `words` (a phrase: as consecutive words) or
/// among `header_tokens`.
bool has_context(const std::vector<std::string>& words,
                 const std::vector<std::string>& header_tokens, const ContextTerms& terms);

/// NSS's ContextSpan: whether a term occurs as whole tokens within `span`
/// characters before `begin` or after `end`, in the same sentence.
bool window_has(std::string_view cell, std::size_t begin, std::size_t end, std::size_t span,
                const ContextTerms& terms);

}  // namespace nss::pii
