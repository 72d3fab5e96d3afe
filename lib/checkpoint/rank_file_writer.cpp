#include "checkpoint/rank_file_writer.h"

#include <algorithm>
#include <cstring>
#include <filesystem>

#include "checkpoint/checksum.h"
#include "checkpoint/shard_file.h"
#include "core/error.h"
#include "core/finite_values.h"

namespace nss::checkpoint {
namespace {

std::vector<Piece> pieces_in_buffer_order(const ShardBuffer& buffer) {
  std::vector<Piece> pieces = buffer.pieces;
  std::sort(pieces.begin(), pieces.end(),
            [](const Piece& a, const Piece& b) { return a.buffer_offset < b.buffer_offset; });
  return pieces;
}

}  // namespace

RankFileResult write_rank_file(const std::string& path, const std::vector<ShardBuffer>& buffers,
                               const RankFileOptions& options) {
  const std::string file_name = std::filesystem::path(path).filename().string();
  ShardFileWriter writer(path, options.file_locking);
  RankFileResult result;
  for (const auto& buffer : buffers) {
    if (buffer.pieces.empty()) continue;
    const std::size_t esize = dtype_size(buffer.dtype);
    const std::uint64_t slice_elements = std::max<std::uint64_t>(1, options.slice_bytes / esize);
    const std::vector<Piece> pieces = pieces_in_buffer_order(buffer);
    std::uint64_t total = 0;
    for (const auto& piece : pieces) total += piece.length;
    writer.create_dataset(buffer.dataset, buffer.dtype, total);

    std::uint64_t dataset_offset = 0;
    for (const auto& piece : pieces) {
      const char* base = static_cast<const char*>(buffer.data) + piece.buffer_offset * esize;
      BlockChecksummer checksums(options.checksum_block_bytes);
      for (std::uint64_t done = 0; done < piece.length;) {
        const std::uint64_t n = std::min(slice_elements, piece.length - done);
        const char* slice = base + done * esize;
        if (const auto bad = first_non_finite(buffer.dtype, slice, n))
          throw CheckpointError(
              "checkpoint",
              "refusing to save a non-finite value: tensor " + piece.tensor + " element " +
                  std::to_string(piece.tensor_offset + done + *bad) + " (" + buffer.dataset +
                  ") is NaN or infinite; the step is not committed",
              "the training state diverged; resume from the previous step with a lower "
              "training.lr or a tighter training.grad_clip");
        checksums.update(slice, n * esize);
        writer.write(dataset_offset + done, n, slice);
        done += n;
      }
      result.chunks.push_back({piece.tensor,
                               {file_name, buffer.dataset, dataset_offset, piece.tensor_offset,
                                piece.length, checksums.finish()}});
      dataset_offset += piece.length;
    }
  }
  result.bytes = writer.close_and_sync();
  return result;
}

}  // namespace nss::checkpoint
