#include "checkpoint/layout.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "checkpoint/checksum.h"
#include "core/error.h"

namespace nss::checkpoint {
namespace {

[[noreturn]] void bad_layout(const std::string& what) {
  throw UsageError("checkpoint", "invalid checkpoint layout: " + what,
                   "this is a bug in the caller's shard description; every piece must lie "
                   "inside its buffer and its tensor");
}

std::string piece_text(const ShardBuffer& buffer, const Piece& piece) {
  return "buffer " + buffer.dataset + " piece (" + piece.tensor + ", tensor_offset " +
         std::to_string(piece.tensor_offset) + ", length " + std::to_string(piece.length) +
         ", buffer_offset " + std::to_string(piece.buffer_offset) + ")";
}

}  // namespace

std::uint64_t element_count(const std::vector<std::int64_t>& shape) {
  std::uint64_t n = 1;
  for (const auto d : shape) n *= static_cast<std::uint64_t>(d);
  return n;
}

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string text = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

void validate_layout(const std::vector<TensorSpec>& tensors,
                     const std::vector<ShardBuffer>& buffers) {
  std::map<std::string, const TensorSpec*> by_name;
  for (const auto& t : tensors) {
    if (t.name.empty()) bad_layout("a tensor has an empty name");
    for (const auto d : t.shape)
      if (d < 0) bad_layout("tensor " + t.name + " has a negative dimension");
    if (!by_name.emplace(t.name, &t).second) bad_layout("tensor " + t.name + " is listed twice");
  }
  std::set<std::string> datasets;
  std::map<std::string, std::vector<std::pair<std::uint64_t, std::uint64_t>>> tensor_ranges;
  for (const auto& buffer : buffers) {
    if (buffer.dataset.empty() || buffer.dataset[0] != '/')
      bad_layout("dataset name '" + buffer.dataset + "' must start with '/'");
    if (!datasets.insert(buffer.dataset).second)
      bad_layout("dataset " + buffer.dataset + " is used by two buffers");
    if (buffer.count > 0 && buffer.data == nullptr)
      bad_layout("buffer " + buffer.dataset + " has elements but no data pointer");
    std::vector<std::pair<std::uint64_t, std::uint64_t>> used;
    for (const auto& piece : buffer.pieces) {
      const auto it = by_name.find(piece.tensor);
      if (it == by_name.end()) bad_layout(piece_text(buffer, piece) + ": unknown tensor");
      const TensorSpec& tensor = *it->second;
      if (tensor.dtype != buffer.dtype)
        bad_layout(piece_text(buffer, piece) + ": tensor dtype " + dtype_name(tensor.dtype) +
                   " differs from the buffer's " + dtype_name(buffer.dtype));
      if (piece.length == 0) bad_layout(piece_text(buffer, piece) + ": empty piece");
      if (piece.buffer_offset + piece.length > buffer.count)
        bad_layout(piece_text(buffer, piece) + ": beyond the buffer's " +
                   std::to_string(buffer.count) + " elements");
      if (piece.tensor_offset + piece.length > element_count(tensor.shape))
        bad_layout(piece_text(buffer, piece) + ": beyond the tensor's " +
                   std::to_string(element_count(tensor.shape)) + " elements");
      used.emplace_back(piece.buffer_offset, piece.buffer_offset + piece.length);
      tensor_ranges[piece.tensor].emplace_back(piece.tensor_offset,
                                               piece.tensor_offset + piece.length);
    }
    std::sort(used.begin(), used.end());
    for (std::size_t i = 1; i < used.size(); ++i)
      if (used[i].first < used[i - 1].second)
        bad_layout("buffer " + buffer.dataset + " has overlapping pieces at element " +
                   std::to_string(used[i].first));
  }
  for (auto& [name, ranges] : tensor_ranges) {
    std::sort(ranges.begin(), ranges.end());
    for (std::size_t i = 1; i < ranges.size(); ++i)
      if (ranges[i].first < ranges[i - 1].second)
        bad_layout("tensor " + name + " is held twice by this rank at element " +
                   std::to_string(ranges[i].first));
  }
}

std::uint64_t piece_bytes(const std::vector<ShardBuffer>& buffers) {
  std::uint64_t bytes = 0;
  for (const auto& buffer : buffers)
    for (const auto& piece : buffer.pieces) bytes += piece.length * dtype_size(buffer.dtype);
  return bytes;
}

std::uint64_t tensor_list_fingerprint(const std::vector<TensorSpec>& tensors) {
  std::string text;
  for (const auto& t : tensors)
    text += t.name + '\x1f' + shape_text(t.shape) + '\x1f' + dtype_name(t.dtype) + '\x1f' +
            std::to_string(t.column_blocks) + '\x1e';
  return xxh3_64(text.data(), text.size());
}

}  // namespace nss::checkpoint
