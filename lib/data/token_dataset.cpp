#include "data/token_dataset.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <type_traits>
#include <unistd.h>

#include "core/error.h"
#include "core/fs.h"
#include "data/h5_check.h"
#include "data/mapping_guard.h"

namespace nss::data {
namespace {

const char* const kPrepareHint =
    "write token datasets with nss_prepare_data or scripts/prepare_data_hf.py (docs/data.md)";

// O_NONBLOCK: opening a FIFO for reading must not wait for a writer. The
// descriptor is checked before HDF5 ever sees the path.
int open_regular_file(const std::string& path, off_t* size) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT)
      throw DataError("data", "token dataset " + path + " does not exist",
                      "check data.path; build the file with nss_prepare_data (docs/data.md)");
    throw DataError("data", "cannot open token dataset " + path + ": " + errno_text(err),
                    "check the path and its permissions");
  }
  struct stat info {};
  if (::fstat(fd, &info) != 0) {
    const int err = errno;
    ::close(fd);
    throw DataError("data", "cannot stat token dataset " + path + ": " + errno_text(err));
  }
  if (!S_ISREG(info.st_mode)) {
    ::close(fd);
    throw DataError(
        "data", "token dataset " + path + " is " + file_kind(info.st_mode) + ", not a regular file",
        "point data.path at an HDF5 file written by nss_prepare_data");
  }
  *size = info.st_size;
  return fd;
}

DType token_dtype(hid_t type, const std::string& where) {
  const H5T_class_t type_class = NSS_H5_CHECK(H5Tget_class(type), where);
  const std::size_t size = H5Tget_size(type);
  const std::string fix = std::string("store token ids as one of ") + token_dtype_names() +
                          " (little-endian); " + kPrepareHint;
  if (type_class != H5T_INTEGER) {
    const char* kind = type_class == H5T_FLOAT ? "floating-point" : "not an integer type";
    throw DataError("data", where + " has element type " + kind + ", not integers", fix);
  }
  if (NSS_H5_CHECK(H5Tget_order(type), where) != H5T_ORDER_LE)
    throw DataError("data", where + " holds big-endian integers", fix);
  const bool is_signed = NSS_H5_CHECK(H5Tget_sign(type), where) == H5T_SGN_2;
  if (size == 2 && !is_signed) return DType::kUInt16;
  if (size == 4) return is_signed ? DType::kInt32 : DType::kUInt32;
  if (size == 8 && is_signed) return DType::kInt64;
  throw DataError("data",
                  where + " holds " + std::string(is_signed ? "signed " : "unsigned ") +
                      std::to_string(size * 8) + "-bit integers",
                  fix);
}

std::string filter_names(hid_t create_plist, const std::string& where) {
  const int count = NSS_H5_CHECK(H5Pget_nfilters(create_plist), where);
  std::string names;
  for (int i = 0; i < count; ++i) {
    char name[64] = {};
    unsigned flags = 0, config = 0;
    std::size_t values = 0;
    NSS_H5_CHECK(H5Pget_filter2(create_plist, static_cast<unsigned>(i), &flags, &values, nullptr,
                                sizeof name, name, &config),
                 where);
    names += (names.empty() ? "" : ", ") + std::string(name);
  }
  return names;
}

// Contiguous, in this file, allocated: the only layout that can be mapped.
void require_contiguous(hid_t dataset, const std::string& where, const std::string& path,
                        const char* name) {
  h5::Id create(NSS_H5_CHECK(H5Dget_create_plist(dataset), where));
  const H5D_layout_t layout = NSS_H5_CHECK(H5Pget_layout(create.get()), where);
  const std::string rewrite =
      "rewrite it contiguous and uncompressed: nss_prepare_data, or "
      "h5repack -l /" +
      std::string(name) + ":CONTI " + path + " OUT.h5";
  if (layout == H5D_CHUNKED) {
    const std::string filters = filter_names(create.get(), where);
    throw DataError("data",
                    where + " is chunked" +
                        (filters.empty() ? "" : " and filtered/compressed (" + filters + ")") +
                        "; the dataloader memory-maps contiguous datasets",
                    rewrite);
  }
  if (layout != H5D_CONTIGUOUS)
    throw DataError("data",
                    where + " has " + (layout == H5D_COMPACT ? "compact" : "virtual or unknown") +
                        " storage; the dataloader memory-maps contiguous datasets",
                    rewrite);
  if (NSS_H5_CHECK(H5Pget_external_count(create.get()), where) > 0)
    throw DataError("data", where + " keeps its data in external files", rewrite);
}

template <class T>
void widen(const unsigned char* source, std::int64_t count, std::int64_t* out) {
  for (std::int64_t i = 0; i < count; ++i) {
    T value;
    std::memcpy(&value, source + i * static_cast<std::int64_t>(sizeof(T)), sizeof(T));
    out[i] = static_cast<std::int64_t>(value);
  }
}

// Where a contiguous 1-D dataset's bytes lie in the file.
struct Extent {
  std::string name;
  std::uint64_t offset = 0;
  std::int64_t count = 0;
  std::size_t element = 0;

  bool present() const { return element > 0; }
  std::uint64_t end() const { return offset + static_cast<std::uint64_t>(count) * element; }
};

bool has_dataset(hid_t file, const char* name, const std::string& path) {
  if (NSS_H5_CHECK(H5Lexists(file, name, H5P_DEFAULT), path) <= 0) return false;
  h5::Id object(NSS_H5_CHECK(H5Oopen(file, name, H5P_DEFAULT), path + ":/" + name));
  return H5Iget_type(object.get()) == H5I_DATASET;
}

// Opens /name, checks it is 1-D and mappable; `element_size(type)` checks the
// element type and returns its size.
template <class ElementSize>
Extent locate(hid_t file, const char* name, const std::string& path, ElementSize element_size) {
  const std::string where = path + ":/" + name;
  h5::Id dataset(NSS_H5_CHECK(H5Dopen2(file, name, H5P_DEFAULT), where));
  h5::Id space(NSS_H5_CHECK(H5Dget_space(dataset.get()), where));
  const int rank = NSS_H5_CHECK(H5Sget_simple_extent_ndims(space.get()), where);
  if (rank != 1)
    throw DataError("data", where + " has rank " + std::to_string(rank) + ", not 1",
                    "store it as one flat 1-D array; " + std::string(kPrepareHint));
  hsize_t dims[1] = {0};
  NSS_H5_CHECK(H5Sget_simple_extent_dims(space.get(), dims, nullptr), where);
  h5::Id type(NSS_H5_CHECK(H5Dget_type(dataset.get()), where));
  Extent extent;
  extent.name = name;
  extent.element = element_size(type.get());
  extent.count = static_cast<std::int64_t>(dims[0]);
  require_contiguous(dataset.get(), where, path, name);
  if (extent.count == 0) return extent;
  extent.offset = H5Dget_offset(dataset.get());
  if (extent.offset == HADDR_UNDEF)
    throw DataError("data", where + " has no data written (storage not allocated)", kPrepareHint);
  return extent;
}

void require_unsigned_bytes(hid_t type, const std::string& where) {
  if (NSS_H5_CHECK(H5Tget_class(type), where) != H5T_INTEGER || H5Tget_size(type) != 1 ||
      NSS_H5_CHECK(H5Tget_sign(type), where) != H5T_SGN_NONE)
    throw DataError("data", where + " must hold uint8 (1 = a prediction target, 0 = not)",
                    kPrepareHint);
}

void require_int64(hid_t type, const std::string& where) {
  if (NSS_H5_CHECK(H5Tget_class(type), where) != H5T_INTEGER || H5Tget_size(type) != 8 ||
      NSS_H5_CHECK(H5Tget_sign(type), where) != H5T_SGN_2 ||
      NSS_H5_CHECK(H5Tget_order(type), where) != H5T_ORDER_LE)
    throw DataError("data", where + " must hold little-endian int64 token offsets", kPrepareHint);
}

void require_length(const Extent& extent, std::int64_t expected, const std::string& where,
                    const char* what) {
  if (extent.count != expected)
    throw DataError("data",
                    where + " has " + std::to_string(extent.count) + " entries, not " +
                        std::to_string(expected) + " (" + what + ")",
                    kPrepareHint);
}

TokenFileMetadata read_metadata(hid_t root, const std::string& path) {
  TokenFileMetadata metadata;
  visit_attributes(metadata, [&](const char* name, auto& value) {
    if (!has_attribute(root, name, path)) return;
    if constexpr (std::is_same_v<std::decay_t<decltype(value)>, std::string>)
      value = read_string_attribute(root, name, path);
    else
      value = read_int_attribute(root, name, path);
  });
  return metadata;
}

}  // namespace

std::shared_ptr<const TokenDataset> TokenDataset::open(const std::string& path) {
  std::shared_ptr<TokenDataset> dataset(new TokenDataset());
  dataset->path_ = path;
  off_t file_bytes = 0;
  FileDescriptor fd(open_regular_file(path, &file_bytes));

  Extent tokens, loss_mask, offsets;
  {
    if (NSS_H5_CHECK(H5Fis_hdf5(path.c_str()), path) <= 0)
      throw DataError("data", "token dataset " + path + " is not an HDF5 file", kPrepareHint);
    h5::Id access(NSS_H5_CHECK(H5Pcreate(H5P_FILE_ACCESS), path));
    // Token files are written to a temporary name and renamed, never changed
    // in place, so reads need no lock (and flock fails on some cluster mounts).
    NSS_H5_CHECK(H5Pset_file_locking(access.get(), false, true), path);
    h5::Id file(NSS_H5_CHECK(H5Fopen(path.c_str(), H5F_ACC_RDONLY, access.get()), path));
    if (!has_dataset(file.get(), kTokensDataset, path))
      throw DataError("data", "token dataset " + path + " has no /tokens dataset", kPrepareHint);
    const std::string where = path + ":/" + kTokensDataset;
    tokens = locate(file.get(), kTokensDataset, path, [&](hid_t type) {
      dataset->dtype_ = token_dtype(type, where);
      return dtype_size(dataset->dtype_);
    });
    dataset->num_tokens_ = tokens.count;
    if (tokens.count == 0)
      throw DataError("data", where + " is empty", "prepare it from inputs that hold text");
    if (has_dataset(file.get(), kLossMaskDataset, path)) {
      loss_mask = locate(file.get(), kLossMaskDataset, path, [&](hid_t type) {
        require_unsigned_bytes(type, path + ":/" + kLossMaskDataset);
        return std::size_t{1};
      });
      require_length(loss_mask, tokens.count, path + ":/" + kLossMaskDataset, "one per token");
    }
    if (has_dataset(file.get(), kDocumentOffsetsDataset, path))
      offsets = locate(file.get(), kDocumentOffsetsDataset, path, [&](hid_t type) {
        require_int64(type, path + ":/" + kDocumentOffsetsDataset);
        return std::size_t{8};
      });
    dataset->metadata_ = read_metadata(file.get(), path);
  }

  for (const Extent* extent : {&tokens, &loss_mask, &offsets})
    if (extent->present() && extent->end() > static_cast<std::uint64_t>(file_bytes))
      throw DataError("data",
                      "token dataset " + path + " is truncated: /" + extent->name +
                          " needs bytes up to " + std::to_string(extent->end()) +
                          " but the file has " + std::to_string(file_bytes),
                      "copy or prepare the file again");
  dataset->mapping_bytes_ = static_cast<std::size_t>(file_bytes);
  void* mapping = ::mmap(nullptr, dataset->mapping_bytes_, PROT_READ, MAP_SHARED, fd.get(), 0);
  if (mapping == MAP_FAILED)
    throw DataError("data", "cannot memory-map " + path + ": " + errno_text(errno),
                    "the file system must support mmap (most parallel file systems do)");
  dataset->mapping_ = mapping;
  const auto* base = static_cast<const unsigned char*>(mapping);
  dataset->tokens_ = base + tokens.offset;
  if (loss_mask.present()) dataset->loss_mask_ = base + loss_mask.offset;
  if (offsets.present()) {
    dataset->document_offsets_ = base + offsets.offset;
    dataset->num_documents_ = offsets.count - 1;
    dataset->check_document_offsets(offsets.count);
  }
  return dataset;
}

void TokenDataset::check_document_offsets(std::int64_t entries) const {
  const std::string where = path_ + ":/" + kDocumentOffsetsDataset;
  const std::string fix =
      "document d is tokens [offsets[d], offsets[d+1]); " + std::string(kPrepareHint);
  if (entries < 2)
    throw DataError("data",
                    where + " has " + std::to_string(entries) + " entries, at least 2 needed", fix);
  if (metadata_.documents && *metadata_.documents != num_documents_)
    throw DataError("data",
                    where + " delimits " + std::to_string(num_documents_) +
                        " documents but the documents attribute says " +
                        std::to_string(*metadata_.documents),
                    fix);
  if (document_offset(0) != 0 || document_offset(num_documents_) != num_tokens_)
    throw DataError("data",
                    where + " runs from " + std::to_string(document_offset(0)) + " to " +
                        std::to_string(document_offset(num_documents_)) + ", not 0 to " +
                        std::to_string(num_tokens_) + " (the token count)",
                    fix);
  for (std::int64_t d = 0; d < num_documents_; ++d)
    if (document_offset(d + 1) <= document_offset(d))
      throw DataError("data",
                      where + ": document " + std::to_string(d) +
                          " is empty or reversed (offsets " + std::to_string(document_offset(d)) +
                          ", " + std::to_string(document_offset(d + 1)) + ")",
                      "offsets must strictly increase; " + fix);
}

TokenDataset::~TokenDataset() {
  if (mapping_) ::munmap(mapping_, mapping_bytes_);
}

void TokenDataset::read(std::int64_t first, std::int64_t count, std::int64_t* out) const {
  copy_tokens(first, count, out);
  check_ids(first, count, out);
}

void TokenDataset::copy_tokens(std::int64_t first, std::int64_t count, std::int64_t* out) const {
  NSS_ASSERT(first >= 0 && count >= 0 && first + count <= num_tokens_, "data",
             "token range outside " + path_);
  const unsigned char* source = tokens_ + first * static_cast<std::int64_t>(dtype_size(dtype_));
  auto copy = [&] {
    switch (dtype_) {
      case DType::kUInt16:
        widen<std::uint16_t>(source, count, out);
        break;
      case DType::kInt32:
        widen<std::int32_t>(source, count, out);
        break;
      case DType::kUInt32:
        widen<std::uint32_t>(source, count, out);
        break;
      default:
        widen<std::int64_t>(source, count, out);
        break;
    }
  };
  if (!copy_from_mapping(mapping_, mapping_bytes_, copy)) throw_shrunk(kTokensDataset, first);
}

void TokenDataset::read_loss_mask(std::int64_t first, std::int64_t count, std::uint8_t* out) const {
  NSS_ASSERT(first >= 0 && count >= 0 && first + count <= num_tokens_, "data",
             "loss-mask range outside " + path_);
  if (!loss_mask_) {
    std::memset(out, 1, static_cast<std::size_t>(count));
    return;
  }
  // Any non-zero byte is a target, weighted 1 like every other.
  auto copy = [&] {
    for (std::int64_t i = 0; i < count; ++i) out[i] = loss_mask_[first + i] != 0 ? 1 : 0;
  };
  if (!copy_from_mapping(mapping_, mapping_bytes_, copy)) throw_shrunk(kLossMaskDataset, first);
}

std::int64_t TokenDataset::document_offset(std::int64_t d) const {
  NSS_ASSERT(document_offsets_ && d >= 0 && d <= num_documents_, "data",
             "document index outside " + path_);
  std::int64_t offset;
  auto copy = [&] { std::memcpy(&offset, document_offsets_ + d * 8, 8); };
  if (!copy_from_mapping(mapping_, mapping_bytes_, copy)) throw_shrunk(kDocumentOffsetsDataset, d);
  return offset;
}

void TokenDataset::throw_shrunk(const char* name, std::int64_t index) const {
  throw DataError("data",
                  "token dataset " + path_ + " shrank under the running job: the read of /" + name +
                      " from entry " + std::to_string(index) + " reached past the file's end (" +
                      std::to_string(mapping_bytes_) +
                      " bytes when opened; truncated or rewritten in place)",
                  "never truncate or rewrite a token file that a job reads: write the new file "
                  "under another name and rename it into place (running jobs keep reading the "
                  "old one), then restart the job");
}

}  // namespace nss::data
