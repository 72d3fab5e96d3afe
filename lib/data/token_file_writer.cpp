#include "data/token_file_writer.h"

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <unistd.h>

#include "core/error.h"
#include "core/fs.h"
#include "h5/types.h"

namespace nss::data {
namespace {

constexpr std::size_t kBufferTokens = std::size_t{1} << 20;

std::int64_t largest_id_of(DType dtype) {
  switch (dtype) {
    case DType::kUInt16:
      return std::numeric_limits<std::uint16_t>::max();
    case DType::kInt32:
      return std::numeric_limits<std::int32_t>::max();
    case DType::kUInt32:
      return std::numeric_limits<std::uint32_t>::max();
    default:
      return std::numeric_limits<std::int64_t>::max();
  }
}

template <class T>
std::vector<unsigned char> narrow(const std::vector<std::int64_t>& tokens) {
  std::vector<unsigned char> bytes(tokens.size() * sizeof(T));
  T* out = reinterpret_cast<T*>(bytes.data());
  for (std::size_t i = 0; i < tokens.size(); ++i) out[i] = static_cast<T>(tokens[i]);
  return bytes;
}

}  // namespace

TokenFileWriter::TokenFileWriter(std::string path, DType dtype, std::int64_t num_tokens)
    : path_(std::move(path)),
      temporary_path_(temporary_path_for(path_)),
      dtype_(dtype),
      num_tokens_(num_tokens) {
  if (!is_token_dtype(dtype))
    throw InternalError("data", std::string("tokens cannot be stored as ") + dtype_name(dtype));
  if (num_tokens <= 0)
    throw DataError("data", "no tokens to write to " + path_, "give inputs that are not empty");
  const std::filesystem::path parent = std::filesystem::path(path_).parent_path();
  if (!parent.empty()) create_directories(parent.string(), "data");
  buffer_.reserve(kBufferTokens);

  file_ = h5::Id(
      NSS_H5_CHECK(H5Fcreate(temporary_path_.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT),
                   temporary_path_));
  const hsize_t dims[1] = {static_cast<hsize_t>(num_tokens)};
  h5::Id space(NSS_H5_CHECK(H5Screate_simple(1, dims, nullptr), temporary_path_));
  h5::Id create(NSS_H5_CHECK(H5Pcreate(H5P_DATASET_CREATE), temporary_path_));
  // Contiguous and allocated at creation: the reader memory-maps it by offset.
  NSS_H5_CHECK(H5Pset_layout(create.get(), H5D_CONTIGUOUS), temporary_path_);
  NSS_H5_CHECK(H5Pset_alloc_time(create.get(), H5D_ALLOC_TIME_EARLY), temporary_path_);
  NSS_H5_CHECK(H5Pset_fill_time(create.get(), H5D_FILL_TIME_NEVER), temporary_path_);
  dataset_ = h5::Id(NSS_H5_CHECK(H5Dcreate2(file_.get(), kTokensDataset, h5::file_type(dtype),
                                            space.get(), H5P_DEFAULT, create.get(), H5P_DEFAULT),
                                 temporary_path_));
}

TokenFileWriter::~TokenFileWriter() {
  if (committed_) return;
  dataset_.reset();
  file_.reset();
  std::remove(temporary_path_.c_str());
}

void TokenFileWriter::append(const std::int64_t* tokens, std::int64_t count) {
  if (written_ + static_cast<std::int64_t>(buffer_.size()) + count > num_tokens_)
    throw InternalError("data", "more tokens appended to " + path_ + " than the " +
                                    std::to_string(num_tokens_) + " announced");
  const std::int64_t largest = largest_id_of(dtype_);
  for (std::int64_t i = 0; i < count; ++i) {
    const std::int64_t id = tokens[i];
    if (id < 0 || id > largest)
      throw DataError(
          "data",
          "token id " + std::to_string(id) + " does not fit " + dtype_name(dtype_) + " in " + path_,
          "token ids must be in [0, vocab_size)");
    if (id > max_token_id_) max_token_id_ = id;
    buffer_.push_back(id);
    if (buffer_.size() == kBufferTokens) flush_buffer();
  }
}

void TokenFileWriter::flush_buffer() {
  if (buffer_.empty()) return;
  std::vector<unsigned char> bytes;
  switch (dtype_) {
    case DType::kUInt16:
      bytes = narrow<std::uint16_t>(buffer_);
      break;
    case DType::kInt32:
      bytes = narrow<std::int32_t>(buffer_);
      break;
    case DType::kUInt32:
      bytes = narrow<std::uint32_t>(buffer_);
      break;
    default:
      bytes = narrow<std::int64_t>(buffer_);
      break;
  }
  const hsize_t start[1] = {static_cast<hsize_t>(written_)};
  const hsize_t count[1] = {static_cast<hsize_t>(buffer_.size())};
  h5::Id file_space(NSS_H5_CHECK(H5Dget_space(dataset_.get()), temporary_path_));
  NSS_H5_CHECK(
      H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start, nullptr, count, nullptr),
      temporary_path_);
  h5::Id memory_space(NSS_H5_CHECK(H5Screate_simple(1, count, nullptr), temporary_path_));
  NSS_H5_CHECK(H5Dwrite(dataset_.get(), h5::memory_type(dtype_), memory_space.get(),
                        file_space.get(), H5P_DEFAULT, bytes.data()),
               temporary_path_);
  written_ += static_cast<std::int64_t>(buffer_.size());
  buffer_.clear();
}

void TokenFileWriter::commit(TokenFileMetadata metadata) {
  flush_buffer();
  if (written_ != num_tokens_)
    throw InternalError("data", std::to_string(written_) + " tokens written to " + path_ + ", " +
                                    std::to_string(num_tokens_) + " announced");
  metadata.max_token_id = max_token_id_;
  const hid_t root = file_.get();
  write_string_attribute(root, kTokenizerAttribute, metadata.tokenizer, temporary_path_);
  if (!metadata.tokenizer_sha256.empty())
    write_string_attribute(root, kTokenizerSha256Attribute, metadata.tokenizer_sha256,
                           temporary_path_);
  const auto write_optional = [&](const char* name, const std::optional<std::int64_t>& value) {
    if (value) write_int_attribute(root, name, *value, temporary_path_);
  };
  write_optional(kVocabSizeAttribute, metadata.vocab_size);
  write_optional(kMaxTokenIdAttribute, metadata.max_token_id);
  write_optional(kDocumentsAttribute, metadata.documents);
  write_optional(kBosTokenIdAttribute, metadata.bos_token_id);
  write_optional(kEosTokenIdAttribute, metadata.eos_token_id);
  NSS_H5_CHECK(dataset_.close(), temporary_path_);
  NSS_H5_CHECK(file_.close(), temporary_path_);
  fsync_file(temporary_path_);
  if (std::rename(temporary_path_.c_str(), path_.c_str()) != 0)
    throw DataError("data",
                    "cannot rename " + temporary_path_ + " to " + path_ + ": " + errno_text(errno),
                    "check that the output directory is writable");
  committed_ = true;
  const std::filesystem::path parent = std::filesystem::path(path_).parent_path();
  fsync_directory(parent.empty() ? "." : parent.string());
}

}  // namespace nss::data
