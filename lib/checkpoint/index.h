// metadata.json: the whole index of a committed step, readable without nss_hpc
// (docs/checkpoints.md describes it field by field).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/dtype.h"

namespace nss::checkpoint {

inline constexpr const char* kIndexFile = "metadata.json";
inline constexpr const char* kFormatName = "nss-dcp";
/// Version 1, and version 2 for a step that stores a tensor in column blocks
/// (TensorRecord::column_blocks), which a reader of version 1 would misread.
inline constexpr int kFormatVersion = 2;
inline constexpr const char* kChecksumName = "xxh3_64";
inline constexpr std::uint64_t kDefaultChecksumBlockBytes = 4u << 20;

/// A tensor's element range [tensor_offset, tensor_offset + length) stored in
/// `file`'s 1-D `dataset` from `dataset_offset`.
struct ChunkRecord {
  std::string file;
  std::string dataset;
  std::uint64_t dataset_offset = 0;
  std::uint64_t tensor_offset = 0;
  std::uint64_t length = 0;
  std::vector<std::string> checksums;  // XXH3-64 hex per checksum block
};

struct TensorRecord {
  std::vector<std::int64_t> shape;
  DType dtype = DType::kFloat32;
  std::vector<ChunkRecord> chunks;  // sorted by tensor_offset (stored order)
  /// > 1: a matrix stored as this many blocks of columns (layout.h's TensorSpec).
  int column_blocks = 1;
};

struct CheckpointIndex {
  std::int64_t step = 0;
  int world_size = 0;
  std::uint64_t checksum_block_bytes = kDefaultChecksumBlockBytes;
  std::map<std::string, TensorRecord> tensors;
  /// The training state (training_state.h) and each public section of a
  /// stateful component (stateful_component.h) by name.
  nlohmann::json state = nlohmann::json::object();
  /// Each secret section by name: what only a resume may read; no export or
  /// report copies it. Written only when not empty.
  nlohmann::json secrets = nlohmann::json::object();
  std::map<std::string, std::uint64_t> file_bytes;  // rank file name -> size
};

/// The format version a step needs: 2 when it stores a tensor in column blocks, else 1.
int format_version(const CheckpointIndex& index);

/// Serialises to the metadata.json text (pretty, one field per line).
std::string index_to_text(const CheckpointIndex& index);

/// Parses metadata.json text; throws CheckpointError naming `origin` and the bad field.
CheckpointIndex parse_index(const std::string& text, const std::string& origin);

/// The text of `<step_dir>/metadata.json`; throws CheckpointError when it is missing or unreadable.
std::string read_index_text(const std::string& step_dir);

/// Reads and parses `<step_dir>/metadata.json`; throws CheckpointError when missing or invalid.
CheckpointIndex read_index(const std::string& step_dir);

/// Problems with tensor coverage (gaps, overlaps, chunks past the end, checksum
/// counts that do not match the chunk size); empty when every tensor is tiled exactly.
std::vector<std::string> coverage_problems(const CheckpointIndex& index);

/// Bytes of one element range of a tensor.
std::uint64_t chunk_bytes(const TensorRecord& tensor, const ChunkRecord& chunk);

}  // namespace nss::checkpoint
