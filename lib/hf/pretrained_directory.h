// A local Hugging Face model directory: config.json plus model.safetensors,
// or shards listed in model.safetensors.index.json (transformers' loading
// order). Every weight file is memory-mapped and validated on open; reads are
// slice-wise, so a rank pages in only the parameter ranges it owns. Nothing is
// ever downloaded.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "config/config.h"
#include "hf/safetensors_file.h"

namespace nss::hf {

/// Throws DataError (exit 4) unless `dir` is an existing directory; a Hugging
/// Face hub id ("org/name") gets a hint on how to download it first.
void require_local_model_dir(const std::string& dir);

class PretrainedDirectory {
 public:
  /// Opens `dir`: config.json (hf_config.h), then the weights. Throws
  /// DataError naming the file and the problem: not a local directory, no
  /// config.json, no safetensors weights, a malformed file or index, a shard
  /// missing, a tensor the index lists but its shard lacks.
  static std::shared_ptr<const PretrainedDirectory> open(const std::string& dir);

  const std::string& dir() const { return dir_; }
  /// The shape from config.json.
  const config::ModelConfig& config() const { return config_; }
  /// Weight file names relative to dir(), index first when sharded.
  const std::vector<std::string>& weight_files() const { return weight_files_; }
  /// Every tensor name, sorted.
  std::vector<std::string> tensor_names() const;

  /// The tensor called `name`, or nullptr.
  const SafetensorsTensor* find(const std::string& name) const;

  /// Throws DataError unless `name` exists with exactly `shape` and a
  /// floating-point dtype; the message names the file and config.json.
  void require_tensor(const std::string& name, const std::vector<std::int64_t>& shape) const;

  /// Elements [offset, offset + count) of tensor `name` as float32.
  void read_float32(const std::string& name, std::int64_t offset, std::int64_t count,
                    float* out) const;

 private:
  struct Entry {
    std::shared_ptr<const SafetensorsFile> file;
    const SafetensorsTensor* tensor = nullptr;
  };

  PretrainedDirectory() = default;
  void open_single_file();
  void open_shards();

  std::string dir_;
  config::ModelConfig config_;
  std::vector<std::string> weight_files_;
  std::map<std::string, Entry> tensors_;
};

}  // namespace nss::hf
