#include "checkpoint/rank_file_writer.h"

#include <algorithm>
#include <cstring>
#include <filesystem>

#include "checkpoint/checksum.h"
#include "checkpoint/shard_file.h"
#include "core/error.h"

namespace nss::checkpoint {
namespace {

// A value is not finite when all exponent bits are set. Whole blocks of a
// fixed size are scanned branch-free first (the common, all-finite case), which
// the compiler vectorises at -O2; the scalar loop finds the exact element.
template <class Bits>
std::optional<std::uint64_t> scan_exponent(const void* data, std::uint64_t count, Bits mask) {
  const auto* p = static_cast<const Bits*>(data);
  constexpr std::uint64_t kBlock = 4096;
  std::uint64_t begin = 0;
  for (; begin + kBlock <= count; begin += kBlock) {
    Bits hits = 0;
    for (std::uint64_t i = 0; i < kBlock; ++i)
      hits |= static_cast<Bits>((p[begin + i] & mask) == mask ? ~Bits(0) : Bits(0));
    if (hits) break;
  }
  for (std::uint64_t i = begin; i < count; ++i)
    if ((p[i] & mask) == mask) return i;
  return std::nullopt;
}

std::vector<Piece> pieces_in_buffer_order(const ShardBuffer& buffer) {
  std::vector<Piece> pieces = buffer.pieces;
  std::sort(pieces.begin(), pieces.end(),
            [](const Piece& a, const Piece& b) { return a.buffer_offset < b.buffer_offset; });
  return pieces;
}

}  // namespace

std::optional<std::uint64_t> first_non_finite(DType dtype, const void* data, std::uint64_t count) {
  switch (dtype) {
    case DType::kFloat32:
      return scan_exponent<std::uint32_t>(data, count, 0x7f800000u);
    case DType::kFloat64:
      return scan_exponent<std::uint64_t>(data, count, 0x7ff0000000000000ull);
    case DType::kBFloat16:
      return scan_exponent<std::uint16_t>(data, count, 0x7f80u);
    case DType::kFloat16:
      return scan_exponent<std::uint16_t>(data, count, 0x7c00u);
    default:
      return std::nullopt;
  }
}

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
