#include "checkpoint/checkpoint_reader.h"

#include <algorithm>
#include <cstring>
#include <filesystem>

#include "checkpoint/checksum.h"
#include "checkpoint/layout.h"
#include "core/error.h"

namespace nss::checkpoint {
namespace {

// Direct reads of whole blocks go straight into the caller's memory in runs of
// at most this many bytes, so one HDF5 call never holds the global lock long.
constexpr std::uint64_t kMaxRunBytes = 64u << 20;

}  // namespace

CheckpointReader::CheckpointReader(const std::string& step_dir, bool file_locking)
    : CheckpointReader(step_dir, read_index(step_dir), file_locking) {}

CheckpointReader::CheckpointReader(const std::string& step_dir, CheckpointIndex index,
                                   bool file_locking)
    : step_dir_(step_dir), index_(std::move(index)), file_locking_(file_locking) {}

const TensorRecord& CheckpointReader::tensor(const std::string& name) const {
  const auto it = index_.tensors.find(name);
  if (it == index_.tensors.end())
    throw CheckpointError("checkpoint", step_dir_ + " has no tensor " + name,
                          "the checkpoint was written for another model or configuration");
  return it->second;
}

ShardFileReader& CheckpointReader::file(const std::string& name) {
  auto& slot = files_[name];
  if (!slot)
    slot = std::make_unique<ShardFileReader>((std::filesystem::path(step_dir_) / name).string(),
                                             file_locking_);
  return *slot;
}

std::string CheckpointReader::describe(const std::string& tensor, const ChunkRecord& chunk) const {
  return (std::filesystem::path(step_dir_) / chunk.file).string() + " dataset " + chunk.dataset +
         " (tensor " + tensor + ", elements [" + std::to_string(chunk.tensor_offset) + ", " +
         std::to_string(chunk.tensor_offset + chunk.length) + "))";
}

void CheckpointReader::read(const std::string& tensor_name, std::uint64_t offset,
                            std::uint64_t count, void* out, ColumnView view) {
  const TensorRecord& record = tensor(tensor_name);
  const std::uint64_t numel = element_count(record.shape);
  const bool matrix_view =
      view.blocks >= 1 && view.block >= 0 && view.block < view.blocks &&
      (view.blocks == 1 || (record.shape.size() == 2 && record.shape[1] % view.blocks == 0));
  if (!matrix_view)
    throw CheckpointError("checkpoint",
                          tensor_name + " " + shape_text(record.shape) + " cannot be read as " +
                              std::to_string(view.blocks) + " blocks of columns",
                          "the checkpoint was written for another model shape");
  const std::uint64_t view_numel = numel / static_cast<std::uint64_t>(view.blocks);
  if (offset + count > view_numel)
    throw CheckpointError("checkpoint",
                          "elements [" + std::to_string(offset) + ", " +
                              std::to_string(offset + count) + ") of " + tensor_name +
                              " requested; it has " + std::to_string(view_numel),
                          "the checkpoint was written for another model shape");
  if (count == 0) return;
  char* bytes = static_cast<char*>(out);
  if (view.blocks == record.column_blocks)
    return read_stored(tensor_name, record, view.block * view_numel + offset, count, bytes);
  if (view.blocks == 1 && record.column_blocks == 1)
    return read_stored(tensor_name, record, offset, count, bytes);
  read_across_blocks(tensor_name, record, offset, count, bytes, view);
}

void CheckpointReader::read_across_blocks(const std::string& tensor, const TensorRecord& record,
                                          std::uint64_t offset, std::uint64_t count, char* out,
                                          ColumnView view) {
  const std::size_t esize = dtype_size(record.dtype);
  const auto rows = static_cast<std::uint64_t>(record.shape[0]);
  const auto columns = static_cast<std::uint64_t>(record.shape[1]);
  const auto stored_blocks = static_cast<std::uint64_t>(record.column_blocks);
  const std::uint64_t stored_width = columns / stored_blocks;
  const std::uint64_t view_width = columns / static_cast<std::uint64_t>(view.blocks);
  const std::uint64_t view_first = static_cast<std::uint64_t>(view.block) * view_width;
  // Windows of rows bound the staging memory (about 16 MiB of stored rows).
  const std::uint64_t window_rows = std::max<std::uint64_t>(1, (16u << 20) / esize / stored_width);
  const std::uint64_t end = offset + count;
  std::vector<char> rows_of_block;
  for (std::uint64_t first = offset / view_width; first * view_width < end; first += window_rows) {
    const std::uint64_t last = std::min({rows, first + window_rows, (end - 1) / view_width + 1});
    for (std::uint64_t b = view_first / stored_width;
         b < stored_blocks && b * stored_width < view_first + view_width; ++b) {
      rows_of_block.resize((last - first) * stored_width * esize);
      read_stored(tensor, record, b * rows * stored_width + first * stored_width,
                  (last - first) * stored_width, rows_of_block.data());
      // The columns of this stored block the view holds, row by row.
      const std::uint64_t lo = std::max(view_first, b * stored_width);
      const std::uint64_t hi = std::min(view_first + view_width, (b + 1) * stored_width);
      for (std::uint64_t row = first; row < last; ++row) {
        const std::uint64_t from = std::max(offset, row * view_width + (lo - view_first));
        const std::uint64_t to = std::min(end, row * view_width + (hi - view_first));
        if (from >= to) continue;
        const std::uint64_t column = view_first + from - row * view_width;
        std::memcpy(out + (from - offset) * esize,
                    rows_of_block.data() +
                        ((row - first) * stored_width + (column - b * stored_width)) * esize,
                    (to - from) * esize);
      }
    }
  }
}

void CheckpointReader::read_stored(const std::string& tensor_name, const TensorRecord& record,
                                   std::uint64_t offset, std::uint64_t count, char* out) {
  const std::size_t esize = dtype_size(record.dtype);
  const std::uint64_t end = offset + count;
  // Chunks are sorted by tensor_offset: start at the last one beginning at or before `offset`.
  auto it = std::upper_bound(
      record.chunks.begin(), record.chunks.end(), offset,
      [](std::uint64_t value, const ChunkRecord& c) { return value < c.tensor_offset; });
  if (it != record.chunks.begin()) --it;
  std::uint64_t next = offset;
  for (; it != record.chunks.end() && it->tensor_offset < end; ++it) {
    const std::uint64_t lo = std::max(offset, it->tensor_offset);
    const std::uint64_t hi = std::min(end, it->tensor_offset + it->length);
    if (lo >= hi) continue;
    if (lo != next) break;
    read_from_chunk(tensor_name, record, *it, lo - it->tensor_offset, hi - it->tensor_offset,
                    out + (lo - offset) * esize);
    next = hi;
  }
  if (next != end)
    throw CheckpointError(
        "checkpoint",
        step_dir_ + ": no chunk holds element " + std::to_string(next) + " of " + tensor_name,
        "metadata.json does not cover the tensor; the step cannot be used");
}

void CheckpointReader::read_from_chunk(const std::string& tensor, const TensorRecord& record,
                                       const ChunkRecord& chunk, std::uint64_t lo, std::uint64_t hi,
                                       char* out) {
  const std::size_t esize = dtype_size(record.dtype);
  const std::uint64_t per_block = index_.checksum_block_bytes / esize;
  const std::uint64_t max_run_blocks =
      std::max<std::uint64_t>(1, kMaxRunBytes / index_.checksum_block_bytes);
  std::uint64_t block = lo / per_block;
  const std::uint64_t last_block = (hi - 1) / per_block;
  while (block <= last_block) {
    const std::uint64_t begin = block * per_block;
    const std::uint64_t end = std::min(chunk.length, begin + per_block);
    if (begin >= lo && end <= hi) {
      // A run of whole blocks inside the range: read in place, then verify.
      std::uint64_t run = 1;
      while (block + run <= last_block && run < max_run_blocks &&
             std::min(chunk.length, (block + run + 1) * per_block) <= hi)
        ++run;
      read_verified_blocks(tensor, record, chunk, block, run, out + (begin - lo) * esize);
      block += run;
      continue;
    }
    // A block the range only partly covers: read all of it to verify it.
    scratch_.resize(index_.checksum_block_bytes);
    read_verified_blocks(tensor, record, chunk, block, 1, scratch_.data());
    const std::uint64_t from = std::max(lo, begin), to = std::min(hi, end);
    std::memcpy(out + (from - lo) * esize, scratch_.data() + (from - begin) * esize,
                (to - from) * esize);
    ++block;
  }
}

void CheckpointReader::read_verified_blocks(const std::string& tensor, const TensorRecord& record,
                                            const ChunkRecord& chunk, std::uint64_t first_block,
                                            std::uint64_t blocks, char* out) {
  const std::size_t esize = dtype_size(record.dtype);
  const std::uint64_t per_block = index_.checksum_block_bytes / esize;
  const std::uint64_t begin = first_block * per_block;
  const std::uint64_t end = std::min(chunk.length, (first_block + blocks) * per_block);
  file(chunk.file)
      .read(chunk.dataset, record.dtype, chunk.dataset_offset + begin, end - begin, out);
  bytes_read_ += (end - begin) * esize;
  const std::uint64_t bytes = chunk_bytes(record, chunk);
  for (std::uint64_t b = first_block; b < first_block + blocks; ++b) {
    const std::uint64_t from = b * index_.checksum_block_bytes;
    const std::uint64_t size = std::min(bytes, from + index_.checksum_block_bytes) - from;
    const std::string actual = checksum_hex(xxh3_64(out + (from - begin * esize), size));
    const std::string expected = b < chunk.checksums.size() ? chunk.checksums[b] : "none";
    if (actual != expected)
      throw_checksum_mismatch(describe(tensor, chunk), b, index_.checksum_block_bytes, bytes,
                              expected, actual);
  }
}

void CheckpointReader::stream(
    const std::string& tensor_name, std::uint64_t window_bytes,
    const std::function<void(const void*, std::uint64_t, std::uint64_t)>& sink) {
  const TensorRecord& record = tensor(tensor_name);
  const std::size_t esize = dtype_size(record.dtype);
  const std::uint64_t window = std::max<std::uint64_t>(1, window_bytes / esize);
  if (record.column_blocks > 1) return stream_rows(tensor_name, record, window, sink);
  scratch_.resize(std::min<std::uint64_t>(window, element_count(record.shape)) * esize);
  std::uint64_t next = 0;
  for (const auto& chunk : record.chunks) {
    if (chunk.tensor_offset != next)
      throw CheckpointError("checkpoint",
                            step_dir_ + ": tensor " + tensor_name + " has no chunk at element " +
                                std::to_string(next),
                            "metadata.json does not cover the tensor; the step cannot be used");
    BlockVerifier verifier(index_.checksum_block_bytes, chunk_bytes(record, chunk), chunk.checksums,
                           0, describe(tensor_name, chunk));
    ShardFileReader& reader = file(chunk.file);
    for (std::uint64_t done = 0; done < chunk.length;) {
      const std::uint64_t n = std::min(window, chunk.length - done);
      reader.read(chunk.dataset, record.dtype, chunk.dataset_offset + done, n, scratch_.data());
      bytes_read_ += n * esize;
      verifier.update(scratch_.data(), n * esize);
      sink(scratch_.data(), chunk.tensor_offset + done, n);
      done += n;
    }
    next = chunk.tensor_offset + chunk.length;
  }
  if (next != element_count(record.shape))
    throw CheckpointError(
        "checkpoint",
        step_dir_ + ": tensor " + tensor_name + " has no chunk at element " + std::to_string(next),
        "metadata.json does not cover the tensor; the step cannot be used");
}

std::vector<std::string> CheckpointReader::verify_chunk(const std::string& tensor_name,
                                                        const ChunkRecord& chunk) {
  const TensorRecord& record = tensor(tensor_name);
  const std::uint64_t bytes = chunk_bytes(record, chunk);
  const std::uint64_t blocks = checksum_block_count(bytes, index_.checksum_block_bytes);
  scratch_.resize(std::min(bytes, index_.checksum_block_bytes));
  std::vector<std::string> problems;
  for (std::uint64_t b = 0; b < blocks; ++b) {
    try {
      read_verified_blocks(tensor_name, record, chunk, b, 1, scratch_.data());
    } catch (const CheckpointError& e) {
      problems.push_back(e.message());
      // A missing file or dataset fails every block alike: report it once.
      if (e.message().find("checksum mismatch") == std::string::npos) break;
    }
  }
  return problems;
}

void CheckpointReader::stream_rows(
    const std::string& tensor_name, const TensorRecord& record, std::uint64_t window,
    const std::function<void(const void*, std::uint64_t, std::uint64_t)>& sink) {
  const auto rows = static_cast<std::uint64_t>(record.shape[0]);
  const auto columns = static_cast<std::uint64_t>(record.shape[1]);
  const std::uint64_t window_rows = std::max<std::uint64_t>(1, window / columns);
  std::vector<char> rows_read(std::min(rows, window_rows) * columns * dtype_size(record.dtype));
  for (std::uint64_t first = 0; first < rows; first += window_rows) {
    const std::uint64_t n = (std::min(rows, first + window_rows) - first) * columns;
    read(tensor_name, first * columns, n, rows_read.data());
    sink(rows_read.data(), first * columns, n);
  }
}

}  // namespace nss::checkpoint
