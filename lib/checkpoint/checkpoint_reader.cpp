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
                            std::uint64_t count, void* out) {
  const TensorRecord& record = tensor(tensor_name);
  const std::uint64_t numel = element_count(record.shape);
  if (offset + count > numel)
    throw CheckpointError("checkpoint",
                          "elements [" + std::to_string(offset) + ", " +
                              std::to_string(offset + count) + ") of " + tensor_name +
                              " requested; it has " + std::to_string(numel),
                          "the checkpoint was written for another model shape");
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
                    static_cast<char*>(out) + (lo - offset) * esize);
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

}  // namespace nss::checkpoint
