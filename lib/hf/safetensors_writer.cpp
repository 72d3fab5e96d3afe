#include "hf/safetensors_writer.h"

#include <algorithm>

#include "core/error.h"
#include "hf/element_convert.h"

namespace nss::hf {
namespace {

// Conversion happens through a bounded buffer: memory stays constant however
// large the piece the caller hands in.
constexpr std::int64_t kConvertBytes = std::int64_t{4} << 20;

}  // namespace

std::map<std::string, std::string> pytorch_metadata() {
  return {{"format", "pt"}};
}

SafetensorsWriter::SafetensorsWriter(std::string path, std::vector<SafetensorsTensor> tensors,
                                     const std::map<std::string, std::string>& metadata)
    : file_({std::move(path), "safetensors"}), tensors_(std::move(tensors)) {
  const std::string prefix = build_safetensors_header(tensors_, metadata);
  data_start_ = prefix.size();
  data_bytes_ = tensors_.empty() ? 0 : tensors_.back().end;
  for (std::size_t i = 0; i < tensors_.size(); ++i) progress_[tensors_[i].name].tensor = i;
  file_.reserve(file_bytes());
  file_.write_at(0, prefix.data(), prefix.size());
}

SafetensorsWriter::~SafetensorsWriter() = default;

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
  NSS_ASSERT(!committed_, "safetensors", "write after commit to " + path());
  const auto it = progress_.find(name);
  NSS_ASSERT(it != progress_.end(), "safetensors", "no tensor '" + name + "' in " + path());
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
    file_.write_at(start, data, static_cast<std::uint64_t>(count) * out_size);
    return;
  }
  const std::int64_t per_slice = kConvertBytes / static_cast<std::int64_t>(out_size);
  std::vector<unsigned char> buffer(static_cast<std::size_t>(std::min(count, per_slice)) *
                                    out_size);
  const auto* in = static_cast<const unsigned char*>(data);
  for (std::int64_t done = 0; done < count; done += per_slice) {
    const std::int64_t n = std::min(per_slice, count - done);
    convert_elements(in + done * in_size, data_dtype, buffer.data(), tensor.dtype, n);
    file_.write_at(start + static_cast<std::uint64_t>(done) * out_size, buffer.data(),
                   static_cast<std::uint64_t>(n) * out_size);
  }
}

void SafetensorsWriter::commit() {
  NSS_ASSERT(!committed_, "safetensors", "second commit of " + path());
  for (const auto& [name, progress] : progress_) {
    const std::int64_t numel = tensors_[progress.tensor].numel();
    const bool complete =
        numel == 0 || (progress.spans.size() == 1 && progress.spans.begin()->first == 0 &&
                       progress.spans.begin()->second == numel);
    NSS_ASSERT(complete, "safetensors",
               "tensor '" + name + "' of " + path() + " was not completely written");
  }
  file_.commit();
  committed_ = true;
}

}  // namespace nss::hf
