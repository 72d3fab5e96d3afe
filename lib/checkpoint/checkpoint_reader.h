// Serial, verified access to a committed step: any element range of any
// logical tensor, read from whichever rank files hold it, with every checksum
// block it touches verified. Used by load (each rank for its own pieces),
// nss_ckpt verify, nss_consolidate and nss_eval; no MPI here.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "checkpoint/index.h"
#include "checkpoint/shard_file.h"

namespace nss::checkpoint {

/// A matrix seen as `blocks` blocks of columns, block `block` of them
/// ([rows, columns / blocks], row-major); {1, 0} is the row-major tensor.
struct ColumnView {
  int blocks = 1;
  int block = 0;
};

class CheckpointReader {
 public:
  /// Opens `step_dir` and parses its metadata.json (CheckpointError when missing or invalid).
  explicit CheckpointReader(const std::string& step_dir, bool file_locking = true);
  /// Uses an index already parsed (e.g. received from rank 0).
  CheckpointReader(const std::string& step_dir, CheckpointIndex index, bool file_locking = true);

  const CheckpointIndex& index() const { return index_; }
  const std::string& step_dir() const { return step_dir_; }

  /// The record of `tensor`; throws CheckpointError when the step has no such tensor.
  const TensorRecord& tensor(const std::string& name) const;

  /// Reads elements [offset, offset + count) of `tensor` (as `view` sees it,
  /// however the step stores it) into `out` (the tensor's dtype). Whole
  /// checksum blocks around what is read are verified; throws
  /// CheckpointError naming file, dataset, tensor and block on a mismatch.
  void read(const std::string& tensor, std::uint64_t offset, std::uint64_t count, void* out,
            ColumnView view = {});

  /// Streams a whole tensor in row-major order, in windows of at most `window_bytes`,
  /// verifying checksums as the bytes pass (a block is checked once its last
  /// byte has been read, so a window may reach `sink` before its block is
  /// verified: callers write to a temporary output and discard it on error).
  /// `sink(data, tensor_offset, count)` receives each window.
  void stream(const std::string& tensor, std::uint64_t window_bytes,
              const std::function<void(const void*, std::uint64_t, std::uint64_t)>& sink);

  /// Checks every block of one chunk; returns one line per bad block (empty when all verify).
  std::vector<std::string> verify_chunk(const std::string& tensor, const ChunkRecord& chunk);

  /// Bytes read from shard files so far (whole checksum blocks included).
  std::uint64_t bytes_read() const { return bytes_read_; }

  /// "rank_00001.h5 /model/unit_003 (tensor T, elements [a, b))", for messages.
  std::string describe(const std::string& tensor, const ChunkRecord& chunk) const;

 private:
  ShardFileReader& file(const std::string& name);
  /// read() in the step's stored order.
  void read_stored(const std::string& tensor, const TensorRecord& record, std::uint64_t offset,
                   std::uint64_t count, char* out);
  /// stream() of a tensor stored in column blocks: windows of whole rows.
  void stream_rows(const std::string& tensor, const TensorRecord& record, std::uint64_t window,
                   const std::function<void(const void*, std::uint64_t, std::uint64_t)>& sink);
  /// read() of a view the step does not store: the rows it spans, stored
  /// block by block, in windows of rows, and their columns picked.
  void read_across_blocks(const std::string& tensor, const TensorRecord& record,
                          std::uint64_t offset, std::uint64_t count, char* out, ColumnView view);
  void read_from_chunk(const std::string& tensor, const TensorRecord& record,
                       const ChunkRecord& chunk, std::uint64_t lo, std::uint64_t hi, char* out);
  void read_verified_blocks(const std::string& tensor, const TensorRecord& record,
                            const ChunkRecord& chunk, std::uint64_t first_block,
                            std::uint64_t blocks, char* out);

  std::string step_dir_;
  CheckpointIndex index_;
  bool file_locking_;
  std::map<std::string, std::unique_ptr<ShardFileReader>> files_;
  std::vector<char> scratch_;
  std::uint64_t bytes_read_ = 0;
};

}  // namespace nss::checkpoint
