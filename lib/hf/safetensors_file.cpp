#include "hf/safetensors_file.h"

#include <cerrno>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/error.h"
#include "core/finite_values.h"
#include "core/fs.h"
#include "hf/element_convert.h"

namespace nss::hf {
namespace {

// Closes the descriptor on every path out of open(); the mapping outlives it.
struct FileDescriptor {
  int fd = -1;
  ~FileDescriptor() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

std::shared_ptr<const SafetensorsFile> SafetensorsFile::open(const std::string& path) {
  // O_NONBLOCK: a FIFO in place of a weights file must fail, not hang.
  FileDescriptor file{::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK)};
  if (file.fd < 0)
    throw DataError("safetensors", "cannot open " + path + ": " + errno_text(errno),
                    "check the path and its permissions");
  struct stat info {};
  if (::fstat(file.fd, &info) != 0)
    throw DataError("safetensors", "cannot stat " + path + ": " + errno_text(errno));
  if (!S_ISREG(info.st_mode))
    throw DataError("safetensors", path + " is not a regular file",
                    "point at the .safetensors file itself");

  std::shared_ptr<SafetensorsFile> result(new SafetensorsFile());
  result->path_ = path;
  const auto size = static_cast<std::uint64_t>(info.st_size);
  if (size == 0) {
    parse_safetensors_header(nullptr, 0, path);  // throws "truncated"
  }
  void* mapping = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, file.fd, 0);
  if (mapping == MAP_FAILED)
    throw DataError("safetensors", "cannot map " + path + ": " + errno_text(errno),
                    "the file must be on a file system that supports mmap");
  result->mapping_ = mapping;
  result->mapping_bytes_ = size;
  result->header_ =
      parse_safetensors_header(static_cast<const unsigned char*>(mapping), size, path);
  for (std::size_t i = 0; i < result->header_.tensors.size(); ++i)
    result->index_[result->header_.tensors[i].name] = i;
  return result;
}

SafetensorsFile::~SafetensorsFile() {
  if (mapping_) ::munmap(mapping_, mapping_bytes_);
}

const SafetensorsTensor* SafetensorsFile::find(const std::string& name) const {
  const auto it = index_.find(name);
  return it == index_.end() ? nullptr : &header_.tensors[it->second];
}

const SafetensorsTensor& SafetensorsFile::tensor(const std::string& name) const {
  if (const auto* found = find(name)) return *found;
  throw DataError("safetensors", path_ + " has no tensor '" + name + "'",
                  "the file must come from a model with the same architecture and names");
}

const unsigned char* SafetensorsFile::bytes(const SafetensorsTensor& tensor) const {
  return static_cast<const unsigned char*>(mapping_) + header_.data_start + tensor.begin;
}

void SafetensorsFile::read_float32(const std::string& name, std::int64_t offset, std::int64_t count,
                                   float* out) const {
  const SafetensorsTensor& t = tensor(name);
  NSS_ASSERT(offset >= 0 && count >= 0 && offset + count <= t.numel(), "safetensors",
             "element range [" + std::to_string(offset) + ", " + std::to_string(offset + count) +
                 ") outside tensor '" + name + "' of " + std::to_string(t.numel()) + " elements");
  if (!is_convertible_float(t.dtype))
    throw DataError("safetensors",
                    path_ + ": tensor '" + name + "' has dtype " + safetensors_dtype_name(t.dtype) +
                        ", which is not a floating-point weight type",
                    "model weights must be F32, BF16 or F16");
  if (count == 0) return;
  const unsigned char* first = bytes(t) + static_cast<std::uint64_t>(offset) * dtype_size(t.dtype);
  // Every reader of weights (from_pretrained on each rank, nss_eval, a LoRA
  // merge) goes through here, so this is where a damaged model is stopped.
  require_finite(t.dtype, first, static_cast<std::uint64_t>(offset),
                 static_cast<std::uint64_t>(count), path_ + ": tensor '" + name + "'",
                 "the weights are damaged: download or convert the model again");
  convert_elements(first, t.dtype, out, DType::kFloat32, count);
}

}  // namespace nss::hf
