// UTF-8 helpers shared by the tokenizer: Hugging Face `tokenizers` works on
// Rust strings, so text must be valid UTF-8 before it is split, and decoded
// bytes become text the way Rust's String::from_utf8_lossy makes it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace nss::tokenizer {

/// `bytes` with every invalid sequence replaced by U+FFFD, one per maximal
/// invalid subpart (Unicode's recommended practice, which both Rust's
/// from_utf8_lossy and Python's errors="replace" follow).
std::string utf8_lossy(std::string_view bytes);

/// True when `bytes` is valid UTF-8 (no surrogates, no overlong forms).
bool is_valid_utf8(std::string_view bytes);

/// Appends the UTF-8 encoding of code point `cp` to `out`.
void append_utf8(char32_t cp, std::string& out);

/// Decodes the code point at `text[pos]` of valid UTF-8 text and advances
/// `pos` past it.
char32_t next_code_point(std::string_view text, size_t& pos);

/// Rust's char::is_whitespace (the Unicode White_Space property), which
/// `tokenizers` uses for the lstrip/rstrip of added tokens.
bool is_whitespace(char32_t cp);

}  // namespace nss::tokenizer
