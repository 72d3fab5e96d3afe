// How training state is described to the checkpoint library: logical tensors
// (global, identical on every rank) and the flat buffers each rank holds, each
// carrying pieces of those tensors. Plain memory, no libtorch.
//
// Example: rank 1 of 2 holds the fp32 master shard of FSDP unit 3 as one flat
// buffer of 1000 elements; elements [0, 700) are the tail of tensor A
// (tensor elements [300, 1000)), [700, 990) the head of tensor B, [990, 1000)
// padding. That is ShardBuffer{"/model/unit_003", kFloat32, ptr, 1000,
// {{"A", 300, 700, 0}, {"B", 0, 290, 700}}}. Padding belongs to no piece and is
// never saved.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/dtype.h"

namespace nss::checkpoint {

/// One logical tensor: Hugging Face name, global shape, element type, and
/// how a step stores it: row-major, or (column_blocks C > 1, a matrix whose
/// columns C divides) as C blocks of columns one after another, each
/// row-major: the pieces tensor parallelism's ranks hold of a matrix split
/// by columns (docs/checkpoints.md).
struct TensorSpec {
  std::string name;
  std::vector<std::int64_t> shape;
  DType dtype = DType::kFloat32;
  int column_blocks = 1;
};

/// A contiguous range of a tensor's elements held in a buffer. Saved, the
/// offsets count in the tensor as the step stores it (TensorSpec::column_blocks);
/// loaded, in the tensor viewed as `view_blocks` blocks of columns, block
/// `view_block` of them ([rows, columns / view_blocks], row-major), whatever
/// the step stores: view_blocks 1 is the row-major tensor.
struct Piece {
  std::string tensor;
  std::uint64_t tensor_offset = 0;  // first element within the tensor
  std::uint64_t length = 0;         // elements
  std::uint64_t buffer_offset = 0;  // first element within the buffer
  int view_blocks = 1;
  int view_block = 0;
};

/// A flat 1-D buffer of this rank. save() only reads `data`; load() fills the
/// pieces' elements and leaves everything else (padding) untouched.
struct ShardBuffer {
  std::string dataset;  // HDF5 dataset in the rank file, e.g. "/model/unit_003"
  DType dtype = DType::kFloat32;
  void* data = nullptr;
  std::uint64_t count = 0;  // elements
  std::vector<Piece> pieces;
};

/// Elements of a shape (1 for a scalar).
std::uint64_t element_count(const std::vector<std::int64_t>& shape);

/// Checks a rank's buffers against the tensor list: known tensors, matching
/// dtypes, pieces inside their buffer and tensor, no two pieces overlapping in a
/// buffer or in a tensor, distinct dataset names. Throws UsageError naming the
/// buffer and piece (a bug in the caller's layout, not in the checkpoint).
void validate_layout(const std::vector<TensorSpec>& tensors,
                     const std::vector<ShardBuffer>& buffers);

/// Bytes of piece elements in `buffers` (what a save writes and async staging holds).
std::uint64_t piece_bytes(const std::vector<ShardBuffer>& buffers);

/// A 64-bit fingerprint of the tensor list (names, shapes, dtypes), to check
/// that every rank passed the same one.
std::uint64_t tensor_list_fingerprint(const std::vector<TensorSpec>& tensors);

/// "[256, 256]".
std::string shape_text(const std::vector<std::int64_t>& shape);

}  // namespace nss::checkpoint
