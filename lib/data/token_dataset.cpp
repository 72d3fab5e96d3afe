#include "data/token_dataset.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

#include "core/error.h"
#include "core/fs.h"
#include "data/h5_check.h"

namespace nss::data {
namespace {

const char* const kPrepareHint =
    "write token datasets with nss_prepare_data or scripts/prepare_data_hf.py (docs/data.md)";

// Closes a file descriptor on every path out of open().
class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

const char* file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

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
void require_contiguous(hid_t dataset, const std::string& where, const std::string& path) {
  h5::Id create(NSS_H5_CHECK(H5Dget_create_plist(dataset), where));
  const H5D_layout_t layout = NSS_H5_CHECK(H5Pget_layout(create.get()), where);
  const std::string rewrite =
      "rewrite it contiguous and uncompressed: nss_prepare_data, or "
      "h5repack -l /tokens:CONTI " +
      path + " OUT.h5";
  if (layout == H5D_CHUNKED) {
    const std::string filters = filter_names(create.get(), where);
    throw DataError("data",
                    where + " is chunked" +
                        (filters.empty() ? "" : " and filtered/compressed (" + filters + ")") +
                        "; the dataloader memory-maps a contiguous /tokens",
                    rewrite);
  }
  if (layout != H5D_CONTIGUOUS)
    throw DataError("data",
                    where + " has " + (layout == H5D_COMPACT ? "compact" : "virtual or unknown") +
                        " storage; the dataloader memory-maps a contiguous /tokens",
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

}  // namespace

std::shared_ptr<const TokenDataset> TokenDataset::open(const std::string& path) {
  std::shared_ptr<TokenDataset> dataset(new TokenDataset());
  dataset->path_ = path;
  off_t file_bytes = 0;
  FileDescriptor fd(open_regular_file(path, &file_bytes));

  haddr_t offset = HADDR_UNDEF;
  {
    if (NSS_H5_CHECK(H5Fis_hdf5(path.c_str()), path) <= 0)
      throw DataError("data", "token dataset " + path + " is not an HDF5 file", kPrepareHint);
    h5::Id access(NSS_H5_CHECK(H5Pcreate(H5P_FILE_ACCESS), path));
    // Token files are written to a temporary name and renamed, never changed
    // in place, so reads need no lock (and flock fails on some cluster mounts).
    NSS_H5_CHECK(H5Pset_file_locking(access.get(), false, true), path);
    h5::Id file(NSS_H5_CHECK(H5Fopen(path.c_str(), H5F_ACC_RDONLY, access.get()), path));
    const std::string where = path + ":/" + kTokensDataset;
    bool has_tokens = NSS_H5_CHECK(H5Lexists(file.get(), kTokensDataset, H5P_DEFAULT), path) > 0;
    if (has_tokens) {
      h5::Id object(NSS_H5_CHECK(H5Oopen(file.get(), kTokensDataset, H5P_DEFAULT), where));
      has_tokens = H5Iget_type(object.get()) == H5I_DATASET;
    }
    if (!has_tokens)
      throw DataError("data", "token dataset " + path + " has no /tokens dataset", kPrepareHint);
    h5::Id tokens(NSS_H5_CHECK(H5Dopen2(file.get(), kTokensDataset, H5P_DEFAULT), where));
    h5::Id space(NSS_H5_CHECK(H5Dget_space(tokens.get()), where));
    const int rank = NSS_H5_CHECK(H5Sget_simple_extent_ndims(space.get()), where);
    if (rank != 1)
      throw DataError(
          "data", where + " has rank " + std::to_string(rank) + ", not 1",
          "store all documents' tokens as one flat 1-D array; " + std::string(kPrepareHint));
    hsize_t dims[1] = {0};
    NSS_H5_CHECK(H5Sget_simple_extent_dims(space.get(), dims, nullptr), where);
    dataset->num_tokens_ = static_cast<std::int64_t>(dims[0]);
    h5::Id type(NSS_H5_CHECK(H5Dget_type(tokens.get()), where));
    dataset->dtype_ = token_dtype(type.get(), where);
    require_contiguous(tokens.get(), where, path);
    if (dataset->num_tokens_ == 0)
      throw DataError("data", where + " is empty", "prepare it from inputs that hold text");
    offset = H5Dget_offset(tokens.get());
    if (offset == HADDR_UNDEF)
      throw DataError("data", where + " has no data written (storage not allocated)", kPrepareHint);

    const hid_t root = file.get();
    TokenFileMetadata& metadata = dataset->metadata_;
    const auto read_optional = [&](const char* name, std::optional<std::int64_t>& value) {
      if (has_attribute(root, name, path)) value = read_int_attribute(root, name, path);
    };
    if (has_attribute(root, kTokenizerAttribute, path))
      metadata.tokenizer = read_string_attribute(root, kTokenizerAttribute, path);
    if (has_attribute(root, kTokenizerSha256Attribute, path))
      metadata.tokenizer_sha256 = read_string_attribute(root, kTokenizerSha256Attribute, path);
    read_optional(kVocabSizeAttribute, metadata.vocab_size);
    read_optional(kMaxTokenIdAttribute, metadata.max_token_id);
    read_optional(kDocumentsAttribute, metadata.documents);
    read_optional(kBosTokenIdAttribute, metadata.bos_token_id);
    read_optional(kEosTokenIdAttribute, metadata.eos_token_id);
  }

  const std::size_t element = dtype_size(dataset->dtype_);
  const std::uint64_t bytes = static_cast<std::uint64_t>(dataset->num_tokens_) * element;
  if (offset + bytes > static_cast<std::uint64_t>(file_bytes))
    throw DataError("data",
                    "token dataset " + path + " is truncated: /tokens needs bytes up to " +
                        std::to_string(offset + bytes) + " but the file has " +
                        std::to_string(file_bytes),
                    "copy or prepare the file again");
  const std::uint64_t page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  const std::uint64_t start = offset / page * page;
  dataset->mapping_bytes_ = static_cast<std::size_t>(offset + bytes - start);
  void* mapping = ::mmap(nullptr, dataset->mapping_bytes_, PROT_READ, MAP_SHARED, fd.get(),
                         static_cast<off_t>(start));
  if (mapping == MAP_FAILED)
    throw DataError("data", "cannot memory-map " + path + ": " + errno_text(errno),
                    "the file system must support mmap (most parallel file systems do)");
  dataset->mapping_ = mapping;
  dataset->tokens_ = static_cast<const unsigned char*>(mapping) + (offset - start);
  return dataset;
}

TokenDataset::~TokenDataset() {
  if (mapping_) ::munmap(mapping_, mapping_bytes_);
}

void TokenDataset::read(std::int64_t first, std::int64_t count, std::int64_t* out) const {
  NSS_ASSERT(first >= 0 && count >= 0 && first + count <= num_tokens_, "data",
             "token range outside " + path_);
  const unsigned char* source = tokens_ + first * static_cast<std::int64_t>(dtype_size(dtype_));
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
}

MaxTokenId TokenDataset::max_token_id(std::int64_t max_scanned) const {
  MaxTokenId result;
  if (metadata_.max_token_id) {
    result.value = *metadata_.max_token_id;
    result.from_attribute = true;
    return result;
  }
  // A full scan when the file is small; otherwise evenly spaced blocks.
  constexpr std::int64_t kBlocks = 256;
  const std::int64_t scanned = std::min(num_tokens_, std::max<std::int64_t>(max_scanned, 1));
  const std::int64_t blocks = scanned == num_tokens_ ? 1 : kBlocks;
  const std::int64_t block = std::max<std::int64_t>(scanned / blocks, 1);
  std::vector<std::int64_t> buffer(static_cast<std::size_t>(block));
  for (std::int64_t b = 0; b < blocks; ++b) {
    const std::int64_t first = blocks == 1 ? 0 : (num_tokens_ - block) * b / (blocks - 1);
    read(first, block, buffer.data());
    for (const std::int64_t id : buffer) result.value = std::max(result.value, id);
    result.scanned_tokens += block;
  }
  return result;
}

}  // namespace nss::data
