// Rust's char::is_whitespace, which Hugging Face `tokenizers` uses for the
// lstrip/rstrip of added tokens and the Strip normalizer.
#pragma once

namespace nss::tokenizer {

/// True for the code points of Unicode's White_Space property.
bool is_whitespace(char32_t cp);

}  // namespace nss::tokenizer
