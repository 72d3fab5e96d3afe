// Token files written directly with the HDF5 C API, including every way a
// file can be wrong, for the data tests.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <hdf5.h>

namespace nss::testing {

enum class TokensLayout { kContiguous, kChunked, kCompressed, kCompact };

struct TokensFileSpec {
  hid_t file_type = H5T_STD_U16LE;     // element type of /tokens
  std::vector<hsize_t> dims = {1000};  // shape of /tokens
  TokensLayout layout = TokensLayout::kContiguous;
  bool tokens_as_group = false;  // /tokens is a group, not a dataset
  std::string dataset_name = "tokens";
  std::optional<std::int64_t> max_token_id;    // attribute written when set
  std::optional<std::string> fixed_tokenizer;  // fixed-length string attribute
  std::int64_t modulus = 250;                  // token i = i % modulus (+ spike below)
  std::optional<std::int64_t> spike;           // a value written at the last position
};

/// Writes `spec` to `path` (no nss code involved).
void write_tokens_file(const std::string& path, const TokensFileSpec& spec);

/// The token values write_tokens_file stores for `spec`.
std::vector<std::int64_t> expected_tokens(const TokensFileSpec& spec);

}  // namespace nss::testing
