#include "data/byte_tokenizer.h"

namespace nss::data::byte_tokenizer {

std::int64_t document_tokens(std::size_t bytes) {
  return static_cast<std::int64_t>(bytes) + 2;
}

void encode_document(std::string_view document, std::vector<std::int64_t>& tokens) {
  tokens.push_back(kBos);
  for (const char c : document) tokens.push_back(static_cast<unsigned char>(c));
  tokens.push_back(kEos);
}

std::vector<std::string> decode_documents(const std::int64_t* tokens, std::int64_t count) {
  std::vector<std::string> documents;
  std::string current;
  bool inside = false;
  for (std::int64_t i = 0; i < count; ++i) {
    const std::int64_t token = tokens[i];
    if (token == kBos) {
      inside = true;
      current.clear();
    } else if (token == kEos) {
      if (inside) documents.push_back(current);
      inside = false;
    } else if (inside && token >= 0 && token < 256) {
      current.push_back(static_cast<char>(token));
    }
  }
  return documents;
}

}  // namespace nss::data::byte_tokenizer
