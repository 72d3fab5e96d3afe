#include "data/h5_test_files.h"

#include <stdexcept>

namespace nss::testing {
namespace {

void check(bool ok, const char* what) {
  if (!ok) throw std::runtime_error(std::string("HDF5 fixture: ") + what);
}

}  // namespace

std::vector<std::int64_t> expected_tokens(const TokensFileSpec& spec) {
  hsize_t count = 1;
  for (const hsize_t d : spec.dims) count *= d;
  std::vector<std::int64_t> tokens(count);
  for (hsize_t i = 0; i < count; ++i) tokens[i] = static_cast<std::int64_t>(i) % spec.modulus;
  if (spec.spike && count > 0) tokens.back() = *spec.spike;
  return tokens;
}

void write_tokens_file(const std::string& path, const TokensFileSpec& spec) {
  const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  check(file >= 0, "H5Fcreate");
  if (spec.tokens_as_group) {
    const hid_t group =
        H5Gcreate2(file, spec.dataset_name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    check(group >= 0, "H5Gcreate2");
    H5Gclose(group);
  } else {
    const hid_t space =
        H5Screate_simple(static_cast<int>(spec.dims.size()), spec.dims.data(), nullptr);
    const hid_t create = H5Pcreate(H5P_DATASET_CREATE);
    std::vector<hsize_t> chunk(spec.dims.size(), 64);
    if (spec.layout == TokensLayout::kChunked || spec.layout == TokensLayout::kCompressed)
      H5Pset_chunk(create, static_cast<int>(chunk.size()), chunk.data());
    if (spec.layout == TokensLayout::kCompressed) H5Pset_deflate(create, 4);
    if (spec.layout == TokensLayout::kCompact) H5Pset_layout(create, H5D_COMPACT);
    const hid_t dataset = H5Dcreate2(file, spec.dataset_name.c_str(), spec.file_type, space,
                                     H5P_DEFAULT, create, H5P_DEFAULT);
    check(dataset >= 0, "H5Dcreate2");
    const std::vector<std::int64_t> tokens = expected_tokens(spec);
    if (!tokens.empty() && H5Tget_class(spec.file_type) == H5T_INTEGER)
      check(H5Dwrite(dataset, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, tokens.data()) >= 0,
            "H5Dwrite");
    H5Dclose(dataset);
    H5Pclose(create);
    H5Sclose(space);
  }
  const hid_t scalar = H5Screate(H5S_SCALAR);
  if (spec.max_token_id) {
    const hid_t attribute =
        H5Acreate2(file, "max_token_id", H5T_STD_I64LE, scalar, H5P_DEFAULT, H5P_DEFAULT);
    H5Awrite(attribute, H5T_NATIVE_INT64, &*spec.max_token_id);
    H5Aclose(attribute);
  }
  if (spec.fixed_tokenizer) {
    const hid_t type = H5Tcopy(H5T_C_S1);
    H5Tset_size(type, spec.fixed_tokenizer->size() + 4);
    H5Tset_strpad(type, H5T_STR_NULLPAD);
    std::string padded = *spec.fixed_tokenizer;
    padded.resize(spec.fixed_tokenizer->size() + 4, '\0');
    const hid_t attribute = H5Acreate2(file, "tokenizer", type, scalar, H5P_DEFAULT, H5P_DEFAULT);
    H5Awrite(attribute, type, padded.data());
    H5Aclose(attribute);
    H5Tclose(type);
  }
  H5Sclose(scalar);
  check(H5Fclose(file) >= 0, "H5Fclose");
}

}  // namespace nss::testing
