// The built-in byte-level tokenizer: token b < 256 is the byte b, 256 is BOS,
// 257 is EOS. Every byte sequence encodes (invalid UTF-8 passes through), and
// a document is stored as BOS, its bytes, EOS.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace nss::data::byte_tokenizer {

inline constexpr const char* kName = "byte-level";
inline constexpr std::int64_t kBos = 256;
inline constexpr std::int64_t kEos = 257;
inline constexpr std::int64_t kVocabSize = 258;

/// Tokens a document of `bytes` bytes takes: bytes + 2 (BOS and EOS).
std::int64_t document_tokens(std::size_t bytes);

/// Appends BOS, one token per byte of `document`, EOS.
void encode_document(std::string_view document, std::vector<std::int64_t>& tokens);

/// The documents in `tokens`: the bytes between each BOS and the next EOS.
std::vector<std::string> decode_documents(const std::int64_t* tokens, std::int64_t count);

}  // namespace nss::data::byte_tokenizer
