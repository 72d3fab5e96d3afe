// GPT-2's byte-level alphabet: every byte is shown as a printable code point
// (bytes_to_unicode), so a byte-level BPE vocabulary is plain text and any
// byte sequence encodes. Hugging Face's ByteLevel pre-tokenizer and decoder
// use this same table.
#pragma once

#include <array>
#include <string>
#include <string_view>

namespace nss::tokenizer {

/// The code point that stands for each byte (GPT-2's bytes_to_unicode).
const std::array<char32_t, 256>& byte_to_char();

/// `bytes` with every byte replaced by the UTF-8 encoding of its code point.
std::string to_byte_level(std::string_view bytes);

/// Appends the bytes that byte-level `token` stands for to `out`. A token
/// holding a code point outside the alphabet (an added token such as "é")
/// contributes its own UTF-8 bytes, as the ByteLevel decoder does.
void append_byte_level_bytes(std::string_view token, std::string& out);

}  // namespace nss::tokenizer
