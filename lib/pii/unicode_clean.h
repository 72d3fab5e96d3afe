// The pieces of Python's str that python-stdnum's validators rely on, so
// that ours give stdnum's verdicts on any Unicode input: stdnum.util.clean's
// map of look-alike characters, str.strip(), the uppercase letters that
// str.upper() makes ASCII and the decimal digits int() reads (Python 3.11,
// Unicode 14). Text is UTF-8; bytes that are not valid UTF-8 are kept as
// they are (the validators reject such text before it gets here).
#pragma once

#include <string>
#include <string_view>

namespace nss::pii {

/// stdnum.util.clean(text, deletechars): every character mapped through
/// stdnum 1.18's table (dashes, asterisks, commas, full stops, slashes,
/// colons, spaces, apostrophes and fullwidth or mathematical digits to their
/// ASCII form), then every character of `deletechars` (ASCII) deleted.
std::string stdnum_clean(std::string_view text, std::string_view deletechars);

/// `text` without the leading and trailing characters Python's str.isspace()
/// accepts (U+0009–000D, U+001C–001F, U+0020, U+0085, U+00A0, U+1680,
/// U+2000–200A, U+2028, U+2029, U+202F, U+205F, U+3000).
std::string_view python_strip(std::string_view text);

/// Python's str.upper() for the characters whose uppercase is ASCII: a–z,
/// and ß ı ſ ﬀ ﬁ ﬂ ﬃ ﬄ ﬅ ﬆ (ß becomes SS). Every other character is kept:
/// its uppercase is not ASCII, so no validator accepts it either way.
std::string python_upper_ascii(std::string_view text);

/// The value Python's int() gives the one-character string `cp` when it is a
/// decimal digit (general category Nd, any script), or -1.
int python_decimal_value(char32_t cp);

}  // namespace nss::pii
