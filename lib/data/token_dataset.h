// A validated, memory-mapped token dataset (token_file_format.h).
//
// open() is the only place that calls HDF5: it checks the file, reads the
// attributes, asks HDF5 where /tokens' bytes are (H5Dget_offset) and closes
// it again. Reads then copy straight from the mapping, so the dataloader never
// takes HDF5's global lock and never waits behind a checkpoint write.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "core/dtype.h"
#include "data/token_file_format.h"

namespace nss::data {

/// The largest token id and where that figure comes from.
struct MaxTokenId {
  std::int64_t value = -1;
  bool from_attribute = false;      // the max_token_id attribute
  std::int64_t scanned_tokens = 0;  // otherwise: tokens looked at by the sampled scan
};

class TokenDataset {
 public:
  /// Opens, validates and maps `path`; throws DataError (exit 4) naming the
  /// file and the fix: missing, not a regular file, not HDF5, no /tokens,
  /// wrong rank or element type, chunked/compressed/compact/external storage,
  /// empty or truncated. Never blocks on a FIFO.
  static std::shared_ptr<const TokenDataset> open(const std::string& path);

  ~TokenDataset();
  TokenDataset(const TokenDataset&) = delete;
  TokenDataset& operator=(const TokenDataset&) = delete;

  const std::string& path() const { return path_; }
  /// Element type of /tokens in the file.
  DType dtype() const { return dtype_; }
  /// Number of tokens in /tokens.
  std::int64_t num_tokens() const { return num_tokens_; }
  /// The file's attributes.
  const TokenFileMetadata& metadata() const { return metadata_; }

  /// Copies tokens [first, first + count) widened to int64 into `out`.
  /// No HDF5, no locks: safe from any number of threads.
  void read(std::int64_t first, std::int64_t count, std::int64_t* out) const;

  /// The max_token_id attribute; when absent, the largest id seen by a scan
  /// of at most `max_scanned` tokens spread evenly over the file.
  MaxTokenId max_token_id(std::int64_t max_scanned = std::int64_t{1} << 24) const;

 private:
  TokenDataset() = default;

  std::string path_;
  DType dtype_ = DType::kUInt16;
  std::int64_t num_tokens_ = 0;
  TokenFileMetadata metadata_;
  void* mapping_ = nullptr;  // page-aligned start of the mapping
  std::size_t mapping_bytes_ = 0;
  const unsigned char* tokens_ = nullptr;  // first byte of /tokens inside the mapping
};

}  // namespace nss::data
