#include "data/token_file_writer.h"

#include <cerrno>
#include <cstdio>
#include <fcntl.h>
#include <limits>
#include <type_traits>
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

// A contiguous 1-D dataset allocated at creation: the reader maps it by offset.
hid_t create_contiguous(hid_t file, const char* name, hid_t type, std::int64_t count,
                        const std::string& context) {
  const hsize_t dims[1] = {static_cast<hsize_t>(count)};
  h5::Id space(NSS_H5_CHECK(H5Screate_simple(1, dims, nullptr), context));
  h5::Id create(NSS_H5_CHECK(H5Pcreate(H5P_DATASET_CREATE), context));
  NSS_H5_CHECK(H5Pset_layout(create.get(), H5D_CONTIGUOUS), context);
  NSS_H5_CHECK(H5Pset_alloc_time(create.get(), H5D_ALLOC_TIME_EARLY), context);
  NSS_H5_CHECK(H5Pset_fill_time(create.get(), H5D_FILL_TIME_NEVER), context);
  return NSS_H5_CHECK(
      H5Dcreate2(file, name, type, space.get(), H5P_DEFAULT, create.get(), H5P_DEFAULT), context);
}

// Writes `count` elements of `memory_type` at element `first` of `dataset`.
void write_range(hid_t dataset, hid_t memory_type, std::int64_t first, std::int64_t count,
                 const void* data, const std::string& context) {
  const hsize_t start[1] = {static_cast<hsize_t>(first)};
  const hsize_t size[1] = {static_cast<hsize_t>(count)};
  h5::Id file_space(NSS_H5_CHECK(H5Dget_space(dataset), context));
  NSS_H5_CHECK(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start, nullptr, size, nullptr),
               context);
  h5::Id memory_space(NSS_H5_CHECK(H5Screate_simple(1, size, nullptr), context));
  NSS_H5_CHECK(
      H5Dwrite(dataset, memory_type, memory_space.get(), file_space.get(), H5P_DEFAULT, data),
      context);
}

// Every HDF5 call of the writer writes its new output file: a failure there
// is the location's (a full or read-only file system, the file-size limit),
// exit 2 like any other tool output, never "bad data".
template <class Work>
void writing_output(Work work) {
  try {
    work();
  } catch (const DataError& e) {
    throw output_location_error("data", e.message());
  }
}

}  // namespace

OutputTarget token_file_target(const std::string& path) {
  return {path, "data", "--output", ExistingOutput::kReplaceFile};
}

TokenFileWriter::TokenFileWriter(std::string path, DType dtype, std::int64_t num_tokens,
                                 bool with_loss_mask)
    : target_(token_file_target(path)),
      path_(target_.path),
      temporary_path_(temporary_path_for(path_)),
      dtype_(dtype),
      num_tokens_(num_tokens) {
  if (!is_token_dtype(dtype))
    throw InternalError("data", std::string("tokens cannot be stored as ") + dtype_name(dtype));
  if (num_tokens <= 0)
    throw DataError("data", "no tokens to write to " + path_, "give inputs that are not empty");
  check_output_path(target_);
  // Created here first so that a location that cannot take it reports the
  // system's reason (exit 2) rather than HDF5's; HDF5 then truncates it.
  const int fd = ::open(temporary_path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) throw output_location_error("data", "create", temporary_path_, errno);
  const FileDescriptor created(fd);
  const auto bytes =
      static_cast<std::uint64_t>(num_tokens) * (dtype_size(dtype) + (with_loss_mask ? 1 : 0));
  try {  // no destructor runs for a constructor that throws
    // Before HDF5 writes: a failed HDF5 write leaves a file it cannot close.
    reserve_output_room(fd, bytes, "data", temporary_path_);
    writing_output([&] { open_datasets(with_loss_mask); });
  } catch (...) {
    mask_dataset_.reset();
    dataset_.reset();
    file_.reset();
    ::unlink(temporary_path_.c_str());
    throw;
  }
  buffer_.reserve(kBufferTokens);
  if (with_loss_mask) mask_buffer_.reserve(kBufferTokens);
}

void TokenFileWriter::open_datasets(bool with_loss_mask) {
  file_ = h5::Id(
      NSS_H5_CHECK(H5Fcreate(temporary_path_.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT),
                   temporary_path_));
  dataset_ = h5::Id(create_contiguous(file_.get(), kTokensDataset, h5::file_type(dtype_),
                                      num_tokens_, temporary_path_));
  if (with_loss_mask)
    mask_dataset_ = h5::Id(create_contiguous(file_.get(), kLossMaskDataset, H5T_STD_U8LE,
                                             num_tokens_, temporary_path_));
}

TokenFileWriter::~TokenFileWriter() {
  if (committed_) return;
  mask_dataset_.reset();
  dataset_.reset();
  file_.reset();
  std::remove(temporary_path_.c_str());
}

void TokenFileWriter::append(const std::int64_t* tokens, std::int64_t count,
                             const std::uint8_t* loss_mask) {
  const bool masked = mask_dataset_.valid();
  if (masked && loss_mask == nullptr)
    throw InternalError("data", "tokens appended to " + path_ + " without their loss mask");
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
    if (masked) mask_buffer_.push_back(loss_mask[i] ? 1 : 0);
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
  const auto count = static_cast<std::int64_t>(buffer_.size());
  writing_output([&] {
    write_range(dataset_.get(), h5::memory_type(dtype_), written_, count, bytes.data(),
                temporary_path_);
    if (mask_dataset_.valid())
      write_range(mask_dataset_.get(), H5T_NATIVE_UINT8, written_, count, mask_buffer_.data(),
                  temporary_path_);
  });
  mask_buffer_.clear();
  written_ += count;
  buffer_.clear();
}

void TokenFileWriter::end_document() {
  const std::int64_t end = written_ + static_cast<std::int64_t>(buffer_.size());
  if (end == document_offsets_.back())
    throw InternalError("data", "an empty document was marked in " + path_);
  document_offsets_.push_back(end);
}

void TokenFileWriter::write_document_offsets() {
  const auto entries = static_cast<std::int64_t>(document_offsets_.size());
  if (document_offsets_.back() != num_tokens_)
    throw InternalError("data", "the last document of " + path_ + " ends at token " +
                                    std::to_string(document_offsets_.back()) + " of " +
                                    std::to_string(num_tokens_));
  writing_output([&] {
    h5::Id offsets(create_contiguous(file_.get(), kDocumentOffsetsDataset, H5T_STD_I64LE, entries,
                                     temporary_path_));
    write_range(offsets.get(), H5T_NATIVE_INT64, 0, entries, document_offsets_.data(),
                temporary_path_);
  });
}

void TokenFileWriter::commit(TokenFileMetadata metadata) {
  flush_buffer();
  if (written_ != num_tokens_)
    throw InternalError("data", std::to_string(written_) + " tokens written to " + path_ + ", " +
                                    std::to_string(num_tokens_) + " announced");
  metadata.max_token_id = max_token_id_;
  if (document_offsets_.size() > 1) {
    write_document_offsets();
    metadata.documents = static_cast<std::int64_t>(document_offsets_.size()) - 1;
  }
  writing_output([&] {
    const hid_t root = file_.get();
    visit_attributes(metadata, [&](const char* name, const auto& value) {
      if constexpr (std::is_same_v<std::decay_t<decltype(value)>, std::string>) {
        if (!value.empty()) write_string_attribute(root, name, value, temporary_path_);
      } else if (value) {
        write_int_attribute(root, name, *value, temporary_path_);
      }
    });
    if (mask_dataset_.valid()) NSS_H5_CHECK(mask_dataset_.close(), temporary_path_);
    NSS_H5_CHECK(dataset_.close(), temporary_path_);
    NSS_H5_CHECK(file_.close(), temporary_path_);
  });
  try {
    fsync_file(temporary_path_);
  } catch (const InternalError& e) {
    throw output_location_error("data", e.message());
  }
  publish_output(temporary_path_, target_);
  committed_ = true;
  claim_.release();
}

}  // namespace nss::data
