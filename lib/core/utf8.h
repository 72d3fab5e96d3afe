// UTF-8, one owner for the programs that read text: the tokenizer (Hugging
// Face `tokenizers` works on Rust strings, so text is made valid before it is
// split, the way Rust's String::from_utf8_lossy makes it) and nss_evaluate's
// text statistics and report.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace nss {

/// The byte length of the well-formed UTF-8 character at `bytes[pos]`
/// (Unicode's table 3-7: no overlong form, surrogate or code point past
/// U+10FFFF), or 0 when the bytes there are not one.
std::size_t utf8_character_length(std::string_view bytes, std::size_t pos);

/// `bytes` with every invalid sequence replaced by U+FFFD, one per maximal
/// invalid subpart (Unicode's recommended practice, which both Rust's
/// from_utf8_lossy and Python's errors="replace" follow).
std::string utf8_lossy(std::string_view bytes);

/// The code points of `bytes`, invalid sequences read as utf8_lossy reads them.
std::u32string decode_utf8_lossy(std::string_view bytes);

/// The characters of `bytes`: its bytes that do not continue a UTF-8
/// sequence (a stray continuation byte counts for none).
std::size_t count_utf8_characters(std::string_view bytes);

/// True when `bytes` is valid UTF-8 (no surrogates, no overlong forms).
bool is_valid_utf8(std::string_view bytes);

/// Appends the UTF-8 encoding of code point `cp` to `out`.
void append_utf8(char32_t cp, std::string& out);

/// Decodes the code point at `text[pos]` of valid UTF-8 text and advances
/// `pos` past it.
char32_t next_code_point(std::string_view text, std::size_t& pos);

}  // namespace nss
