// Writes the weights of a Hugging Face model directory: one model.safetensors,
// or, above a size limit, model-0000X-of-0000Y.safetensors shards plus
// model.safetensors.index.json, the way transformers' save_pretrained does.
// Data streams in piece by piece (SafetensorsWriter); nothing is visible under
// its final name before commit().
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "hf/safetensors_writer.h"

namespace nss::hf {

/// transformers' default max_shard_size ("5GB").
constexpr std::uint64_t kDefaultMaxShardBytes = 5'000'000'000;

class HfWeightsWriter {
 public:
  /// Plans `tensors` (in this order) into shards of at most `max_shard_bytes`
  /// of data (a tensor larger than that gets a shard of its own) and creates
  /// their temporary files in `dir`, which must exist.
  HfWeightsWriter(std::string dir, const std::vector<SafetensorsTensor>& tensors,
                  std::uint64_t max_shard_bytes = kDefaultMaxShardBytes,
                  const std::map<std::string, std::string>& metadata = pytorch_metadata());

  /// Writes elements [offset, offset + count) of tensor `name` (see SafetensorsWriter::write).
  void write(const std::string& name, std::int64_t offset, std::int64_t count, const void* data,
             DType data_dtype);

  /// Commits every shard, then the index (when sharded), then removes weight
  /// files of an earlier write to `dir` that are not part of this one.
  void commit();

  /// File names (relative to the directory) this writer produces, index last.
  std::vector<std::string> file_names() const;
  /// Total bytes of tensor data.
  std::uint64_t total_data_bytes() const { return total_bytes_; }

 private:
  std::string dir_;
  std::vector<std::unique_ptr<SafetensorsWriter>> shards_;
  std::vector<std::string> shard_names_;
  std::map<std::string, std::size_t> shard_of_;
  std::uint64_t total_bytes_ = 0;
};

}  // namespace nss::hf
