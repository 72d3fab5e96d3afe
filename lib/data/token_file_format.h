// The token dataset format (docs/data.md): one HDF5 file with a contiguous
// (unchunked, uncompressed) 1-D little-endian integer dataset /tokens and
// attributes on the root group that describe it. Any tokenizer can write it;
// nss_prepare_data and scripts/prepare_data_hf.py do.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/dtype.h"

namespace nss::data {

/// Name of the token dataset inside the file.
inline constexpr const char* kTokensDataset = "tokens";

/// Root-group attribute names.
inline constexpr const char* kTokenizerAttribute = "tokenizer";
// SHA-256 of the tokenizer.json the tokens were made with (Hugging Face tokenizers).
inline constexpr const char* kTokenizerSha256Attribute = "tokenizer_sha256";
inline constexpr const char* kVocabSizeAttribute = "vocab_size";
inline constexpr const char* kMaxTokenIdAttribute = "max_token_id";
inline constexpr const char* kDocumentsAttribute = "documents";
inline constexpr const char* kBosTokenIdAttribute = "bos_token_id";
inline constexpr const char* kEosTokenIdAttribute = "eos_token_id";

/// What the attributes say about the tokens. Only /tokens itself is required
/// to train; an absent attribute is std::nullopt (or an empty tokenizer).
struct TokenFileMetadata {
  std::string tokenizer;                     // "byte-level", "hf:<file>", ...
  std::string tokenizer_sha256;              // of the tokenizer.json; empty if unknown
  std::optional<std::int64_t> vocab_size;    // the tokenizer's vocabulary
  std::optional<std::int64_t> max_token_id;  // largest id in /tokens
  std::optional<std::int64_t> documents;     // documents in /tokens
  std::optional<std::int64_t> bos_token_id;
  std::optional<std::int64_t> eos_token_id;
};

/// True for the element types /tokens may have: uint16, int32, uint32, int64.
bool is_token_dtype(DType dtype);

/// "uint16, int32, uint32, int64", for messages.
const char* token_dtype_names();

/// The smallest supported element type that holds every id below `vocab_size`.
DType token_dtype_for_vocab(std::int64_t vocab_size);

}  // namespace nss::data
