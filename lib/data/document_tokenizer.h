// The tokenizer nss_prepare_data encodes documents and examples with: the
// built-in byte-level one, or a Hugging Face tokenizer.json through the C++
// tokenizer (lib/tokenizer), giving what scripts/prepare_data_hf.py gives.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/dtype.h"
#include "data/token_file_format.h"

namespace nss::data {

/// Where a tokenizer.json is and which BOS/EOS to use (prepare_data_hf.py's
/// --tokenizer, --bos-token, --eos-token).
struct TokenizerChoice {
  std::string path;       // tokenizer.json, or the directory holding it
  std::string bos_token;  // empty: tokenizer_config.json, else well-known; "none": no BOS
  std::string eos_token;  // empty: tokenizer_config.json, else well-known
};

class DocumentTokenizer {
 public:
  virtual ~DocumentTokenizer() = default;

  /// Appends the ids of `text`, no special tokens added.
  virtual void encode(std::string_view text, std::vector<std::int64_t>& ids) const = 0;

  /// How many ids encode() appends for `text`.
  virtual std::int64_t count(std::string_view text) const = 0;

  /// True when count() costs far less than encode() (byte-level), so a
  /// caller may count in one pass and encode in another.
  virtual bool counts_without_encoding() const = 0;

  /// Appends [BOS] encode(text) EOS.
  void encode_document(std::string_view text, std::vector<std::int64_t>& ids) const;

  std::optional<std::int64_t> bos() const { return metadata_.bos_token_id; }
  std::int64_t eos() const { return *metadata_.eos_token_id; }

  /// uint16 up to 65536 ids, else uint32 (as prepare_data_hf.py).
  DType dtype() const;

  /// tokenizer, tokenizer_sha256, vocab_size, bos_token_id, eos_token_id.
  const TokenFileMetadata& metadata() const { return metadata_; }

 protected:
  TokenFileMetadata metadata_;
};

/// The built-in byte-level tokenizer (byte_tokenizer.h).
std::unique_ptr<DocumentTokenizer> make_byte_level_tokenizer();

/// A tokenizer.json. UsageError (exit 2) when there is no tokenizer.json at
/// the path or a named BOS/EOS is not in it, or no EOS can be found;
/// DataError (exit 4) for a malformed or unsupported file.
std::unique_ptr<DocumentTokenizer> make_json_tokenizer(const TokenizerChoice& choice);

/// The tokenizer.json a token file's `tokenizer` attribute names
/// ("hf:<file>", as the tokenizer.json's metadata writes it); nullopt for
/// any other value (byte-level, unknown).
std::optional<std::string> recorded_tokenizer_file(const std::string& recorded);

/// The tokenizer a token file's attributes name, made again: byte-level,
/// or the recorded tokenizer.json; nullptr when it names neither, that file
/// cannot be loaded, or it is not the file the data was made with (its
/// SHA-256 differs from the recorded tokenizer_sha256).
std::unique_ptr<DocumentTokenizer> recorded_tokenizer(const TokenFileMetadata& metadata);

}  // namespace nss::data
