// Writes one rank's shard file: every buffer's pieces, packed into one 1-D
// dataset per buffer in buffer order, slice by slice; each slice is checked for
// non-finite values and fed to the chunk's checksums before it is written.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "checkpoint/index.h"
#include "checkpoint/layout.h"

namespace nss::checkpoint {

struct RankFileOptions {
  std::uint64_t checksum_block_bytes = kDefaultChecksumBlockBytes;
  std::uint64_t slice_bytes = 4u << 20;  // most bytes per HDF5 call (bounds the global lock)
  bool file_locking = true;
};

/// A chunk of the index and the tensor it belongs to.
struct TensorChunk {
  std::string tensor;
  ChunkRecord chunk;
};

struct RankFileResult {
  std::vector<TensorChunk> chunks;
  std::uint64_t bytes = 0;  // size of the file on disk
};

/// Writes `buffers` into a new file at `path` (its index name is its base name),
/// fsyncs it and returns its chunks. Throws CheckpointError on I/O failure or on
/// a non-finite value (naming the tensor and element); the caller removes the file.
RankFileResult write_rank_file(const std::string& path, const std::vector<ShardBuffer>& buffers,
                               const RankFileOptions& options);

}  // namespace nss::checkpoint
