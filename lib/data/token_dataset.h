// A validated, memory-mapped token dataset (token_file_format.h).
//
// open() is the only place that calls HDF5: it checks the file, reads the
// attributes, asks HDF5 where /tokens' bytes are (H5Dget_offset) and closes
// it again. Reads then copy straight from the mapping, so the dataloader never
// takes HDF5's global lock and never waits behind a checkpoint write; each copy
// is guarded against the file shrinking under the mapping (mapping_guard.h).
#pragma once

#include <atomic>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>

#include "core/dtype.h"
#include "data/token_file_format.h"

namespace nss::data {

/// What is known of the ids in /tokens without reading them all.
struct TokenIdRange {
  std::int64_t min = 0;             // smallest id the scan saw (0 unscanned: unsigned ids)
  std::int64_t min_at = -1;         // its token offset (-1: not scanned)
  std::int64_t max = -1;            // the largest id: the attribute's, or the scan's when larger
  std::int64_t max_at = -1;         // token offset of a scanned max (-1: the attribute's)
  bool max_from_attribute = false;  // max is the max_token_id attribute
  std::int64_t scanned_tokens = 0;  // tokens the sampled scan looked at (0: no scan)
};

class TokenDataset {
 public:
  /// Opens, validates and maps `path`; throws DataError (exit 4) naming the
  /// file and the fix: missing, not a regular file, not HDF5, no /tokens,
  /// wrong rank or element type, chunked/compressed/compact/external storage,
  /// empty or truncated; a /loss_mask or /document_offsets of the wrong type,
  /// length or layout, offsets that are not 0, increasing, num_tokens. Never
  /// blocks on a FIFO.
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
  /// No HDF5, no locks: safe from any number of threads. DataError naming
  /// the file and the token offset when an id is negative or beyond
  /// limit_token_ids(), or when the file shrank under the mapping (truncated
  /// or rewritten in place; a file replaced by rename is not seen: the
  /// mapping keeps the old one).
  void read(std::int64_t first, std::int64_t count, std::int64_t* out) const;

  /// Makes every later read() refuse ids at or above `vocab_size` (the
  /// lowest limit set wins). Const: readers share the dataset, and the limit
  /// only narrows what they accept.
  void limit_token_ids(std::int64_t vocab_size) const;

  /// True when the file has /loss_mask.
  bool has_loss_mask() const { return loss_mask_ != nullptr; }
  /// Copies loss_mask[first, first + count) into `out` as 0/1 (any non-zero
  /// byte is a target); all 1 without /loss_mask. Thread-safe like read().
  void read_loss_mask(std::int64_t first, std::int64_t count, std::uint8_t* out) const;

  /// True when the file has /document_offsets.
  bool has_document_offsets() const { return document_offsets_ != nullptr; }
  /// Documents /document_offsets delimits (0 without it).
  std::int64_t num_documents() const { return num_documents_; }
  /// First token of document `d` (0 <= d <= num_documents(); d ==
  /// num_documents() gives num_tokens()).
  std::int64_t document_offset(std::int64_t d) const;

  /// The max_token_id attribute and, when it is absent or /tokens is signed
  /// (nothing bounds the ids below), a scan of at most `max_scanned` tokens
  /// in blocks spread evenly over the file (all of a smaller file).
  TokenIdRange token_id_range(std::int64_t max_scanned = std::int64_t{1} << 24) const;

 private:
  TokenDataset() = default;
  void check_document_offsets(std::int64_t entries) const;
  // read() without the id check: the scan looks at ids that may be invalid.
  void copy_tokens(std::int64_t first, std::int64_t count, std::int64_t* out) const;
  // DataError naming the first id of ids[0, count) (tokens from `first` on)
  // outside [0, id_limit_).
  void check_ids(std::int64_t first, std::int64_t count, const std::int64_t* ids) const;
  // DataError when a read of /name from entry `index` met a page the mapping lost.
  [[noreturn]] void throw_shrunk(const char* name, std::int64_t index) const;

  std::string path_;
  DType dtype_ = DType::kUInt16;
  std::int64_t num_tokens_ = 0;
  TokenFileMetadata metadata_;
  std::int64_t num_documents_ = 0;
  void* mapping_ = nullptr;  // the whole file, read-only
  std::size_t mapping_bytes_ = 0;
  mutable std::atomic<std::int64_t> id_limit_{std::numeric_limits<std::int64_t>::max()};
  const unsigned char* tokens_ = nullptr;            // first byte of /tokens in the mapping
  const unsigned char* loss_mask_ = nullptr;         // of /loss_mask, or nullptr
  const unsigned char* document_offsets_ = nullptr;  // of /document_offsets, or nullptr
};

}  // namespace nss::data
