// Writes a token dataset (token_file_format.h) in a streaming way: the token
// count is fixed up front (a contiguous dataset cannot grow), tokens are
// appended in blocks, and commit() makes the file appear atomically.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "data/h5_check.h"
#include "data/token_file_format.h"

namespace nss::data {

class TokenFileWriter {
 public:
  /// Creates a temporary file next to `path` with a contiguous /tokens of
  /// `num_tokens` elements of `dtype` (one of token_dtype_names()).
  TokenFileWriter(std::string path, DType dtype, std::int64_t num_tokens);
  /// Removes the temporary file unless commit() succeeded.
  ~TokenFileWriter();
  TokenFileWriter(const TokenFileWriter&) = delete;
  TokenFileWriter& operator=(const TokenFileWriter&) = delete;

  /// Appends `count` token ids; throws DataError when an id does not fit the
  /// element type or more than `num_tokens` ids arrive.
  void append(const std::int64_t* tokens, std::int64_t count);

  /// Writes the attributes (max_token_id is the largest id appended), closes,
  /// fsyncs and renames the file over `path`. Needs exactly `num_tokens` ids.
  void commit(TokenFileMetadata metadata);

  /// Largest id appended so far (-1 before the first).
  std::int64_t max_token_id() const { return max_token_id_; }

 private:
  void flush_buffer();

  std::string path_;
  std::string temporary_path_;
  DType dtype_;
  std::int64_t num_tokens_;
  std::int64_t written_ = 0;
  std::int64_t max_token_id_ = -1;
  std::vector<std::int64_t> buffer_;
  h5::Id file_;
  h5::Id dataset_;
  bool committed_ = false;
};

}  // namespace nss::data
