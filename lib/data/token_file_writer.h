// Writes a token dataset (token_file_format.h) in a streaming way: the token
// count is fixed up front (a contiguous dataset cannot grow), tokens (and
// their loss mask) are appended in blocks, each document's end is marked,
// and commit() makes the file appear atomically.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/output_location.h"
#include "core/temporary_files.h"
#include "data/h5_check.h"
#include "data/token_file_format.h"

namespace nss::data {

/// Where a token file goes: new, or a regular file it replaces (a token file
/// is derived from its inputs; core/output_location.h).
OutputTarget token_file_target(const std::string& path);

class TokenFileWriter {
 public:
  /// Creates a temporary file next to `path` with a contiguous /tokens of
  /// `num_tokens` elements of `dtype` (one of token_dtype_names()), and a
  /// /loss_mask of as many bytes when `with_loss_mask`. `path` is
  /// token_file_target(path); its directory must exist.
  TokenFileWriter(std::string path, DType dtype, std::int64_t num_tokens,
                  bool with_loss_mask = false);
  /// Removes the temporary file unless commit() succeeded.
  ~TokenFileWriter();
  TokenFileWriter(const TokenFileWriter&) = delete;
  TokenFileWriter& operator=(const TokenFileWriter&) = delete;

  /// Appends `count` token ids; throws DataError when an id does not fit the
  /// element type or more than `num_tokens` ids arrive. `loss_mask` (1 = a
  /// target) is required with a loss mask and ignored without.
  void append(const std::int64_t* tokens, std::int64_t count,
              const std::uint8_t* loss_mask = nullptr);

  /// Marks the end of a document at the tokens appended so far; with marks,
  /// commit() writes /document_offsets and the documents attribute.
  void end_document();

  /// Writes the attributes (max_token_id is the largest id appended), closes,
  /// fsyncs and publishes the file at `path` (publish_output). Needs exactly `num_tokens` ids
  /// and, with document marks, the last one at the end.
  void commit(TokenFileMetadata metadata);

  /// Largest id appended so far (-1 before the first).
  std::int64_t max_token_id() const { return max_token_id_; }

 private:
  void open_datasets(bool with_loss_mask);
  void flush_buffer();
  void write_document_offsets();

  OutputTarget target_;
  std::string path_;
  std::string temporary_path_;
  TemporaryClaim claim_{temporary_path_};
  DType dtype_;
  std::int64_t num_tokens_;
  std::int64_t written_ = 0;
  std::int64_t max_token_id_ = -1;
  std::vector<std::int64_t> buffer_;
  std::vector<std::uint8_t> mask_buffer_;
  std::vector<std::int64_t> document_offsets_{0};
  h5::Id file_;
  h5::Id dataset_;
  h5::Id mask_dataset_;  // open only with a loss mask
  bool committed_ = false;
};

}  // namespace nss::data
