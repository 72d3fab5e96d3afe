#include "hf/safetensors_writer.h"

#include <algorithm>
#include <cerrno>
#include <fcntl.h>
#include <filesystem>
#include <unistd.h>

#include "core/error.h"
#include "core/fs.h"
#include "core/output_location.h"
#include "hf/element_convert.h"

namespace nss::hf {
namespace {

// Conversion happens through a bounded buffer: memory stays constant however
// large the piece the caller hands in.
constexpr std::int64_t kConvertBytes = std::int64_t{4} << 20;

[[noreturn]] void fail_io(const std::string& what, const std::string& path, int error_number) {
  throw output_location_error("safetensors", what, path, error_number);
}

}  // namespace

std::map<std::string, std::string> pytorch_metadata() {
  return {{"format", "pt"}};
}

SafetensorsWriter::SafetensorsWriter(std::string path, std::vector<SafetensorsTensor> tensors,
                                     const std::map<std::string, std::string>& metadata)
    : path_(std::move(path)), tensors_(std::move(tensors)) {
  const std::string prefix = build_safetensors_header(tensors_, metadata);
  data_start_ = prefix.size();
  data_bytes_ = tensors_.empty() ? 0 : tensors_.back().end;
  for (std::size_t i = 0; i < tensors_.size(); ++i) progress_[tensors_[i].name].tensor = i;

  tmp_path_ = temporary_path_for(path_);
  fd_ = ::open(tmp_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) fail_io("create", tmp_path_, errno);
  try {
    write_bytes(prefix.data(), prefix.size(), 0);
    if (::ftruncate(fd_, static_cast<off_t>(file_bytes())) != 0)
      fail_io("extend", tmp_path_, errno);
  } catch (...) {
    // No destructor runs for a constructor that throws.
    ::close(fd_);
    ::unlink(tmp_path_.c_str());
    throw;
  }
}

SafetensorsWriter::~SafetensorsWriter() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_) ::unlink(tmp_path_.c_str());
}

void SafetensorsWriter::write_bytes(const void* data, std::size_t size, std::uint64_t file_offset) {
  const auto* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::pwrite(fd_, p, size, static_cast<off_t>(file_offset));
    if (n < 0) {
      if (errno == EINTR) continue;
      fail_io("write", tmp_path_, errno);
    }
    p += n;
    size -= static_cast<std::size_t>(n);
    file_offset += static_cast<std::uint64_t>(n);
  }
}

void SafetensorsWriter::record_span(Progress& progress, std::int64_t begin, std::int64_t end) {
  const std::string& name = tensors_[progress.tensor].name;
  auto next = progress.spans.lower_bound(begin);
  NSS_ASSERT(next == progress.spans.end() || next->first >= end, "safetensors",
             "elements of '" + name + "' written twice near offset " + std::to_string(begin));
  if (next != progress.spans.begin()) {
    auto previous = std::prev(next);
    NSS_ASSERT(previous->second <= begin, "safetensors",
               "elements of '" + name + "' written twice near offset " + std::to_string(begin));
    if (previous->second == begin) {
      begin = previous->first;
      progress.spans.erase(previous);
    }
  }
  if (next != progress.spans.end() && next->first == end) {
    end = next->second;
    progress.spans.erase(next);
  }
  progress.spans[begin] = end;
}

void SafetensorsWriter::write(const std::string& name, std::int64_t offset, std::int64_t count,
                              const void* data, DType data_dtype) {
  NSS_ASSERT(!committed_, "safetensors", "write after commit to " + path_);
  const auto it = progress_.find(name);
  NSS_ASSERT(it != progress_.end(), "safetensors", "no tensor '" + name + "' in " + path_);
  const SafetensorsTensor& tensor = tensors_[it->second.tensor];
  NSS_ASSERT(offset >= 0 && count >= 0 && offset + count <= tensor.numel(), "safetensors",
             "element range [" + std::to_string(offset) + ", " + std::to_string(offset + count) +
                 ") outside '" + name + "'");
  NSS_ASSERT(data_dtype == tensor.dtype ||
                 (is_convertible_float(data_dtype) && is_convertible_float(tensor.dtype)),
             "safetensors",
             std::string("cannot convert ") + dtype_name(data_dtype) + " to " +
                 dtype_name(tensor.dtype) + " for '" + name + "'");
  if (count == 0) return;
  record_span(it->second, offset, offset + count);

  const std::size_t out_size = dtype_size(tensor.dtype);
  const std::size_t in_size = dtype_size(data_dtype);
  const std::uint64_t start =
      data_start_ + tensor.begin + static_cast<std::uint64_t>(offset) * out_size;
  if (data_dtype == tensor.dtype) {
    write_bytes(data, static_cast<std::size_t>(count) * out_size, start);
    return;
  }
  const std::int64_t per_slice = kConvertBytes / static_cast<std::int64_t>(out_size);
  std::vector<unsigned char> buffer(static_cast<std::size_t>(std::min(count, per_slice)) *
                                    out_size);
  const auto* in = static_cast<const unsigned char*>(data);
  for (std::int64_t done = 0; done < count; done += per_slice) {
    const std::int64_t n = std::min(per_slice, count - done);
    convert_elements(in + done * in_size, data_dtype, buffer.data(), tensor.dtype, n);
    write_bytes(buffer.data(), static_cast<std::size_t>(n) * out_size,
                start + static_cast<std::uint64_t>(done) * out_size);
  }
}

void SafetensorsWriter::commit() {
  NSS_ASSERT(!committed_, "safetensors", "second commit of " + path_);
  for (const auto& [name, progress] : progress_) {
    const std::int64_t numel = tensors_[progress.tensor].numel();
    const bool complete =
        numel == 0 || (progress.spans.size() == 1 && progress.spans.begin()->first == 0 &&
                       progress.spans.begin()->second == numel);
    NSS_ASSERT(complete, "safetensors",
               "tensor '" + name + "' of " + path_ + " was not completely written");
  }
  if (::fsync(fd_) != 0) fail_io("fsync", tmp_path_, errno);
  if (::close(fd_) != 0) fail_io("close", tmp_path_, errno);
  fd_ = -1;
  if (::rename(tmp_path_.c_str(), path_.c_str()) != 0) fail_io("rename into", path_, errno);
  committed_ = true;
  const std::filesystem::path parent = std::filesystem::path(path_).parent_path();
  fsync_directory(parent.empty() ? "." : parent.string());
}

}  // namespace nss::hf
