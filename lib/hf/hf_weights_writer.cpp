#include "hf/hf_weights_writer.h"

#include <algorithm>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/fs.h"
#include "core/output_location.h"
#include "hf/weight_files.h"

namespace nss::hf {

HfWeightsWriter::HfWeightsWriter(std::string dir, const std::vector<SafetensorsTensor>& tensors,
                                 std::uint64_t max_shard_bytes,
                                 const std::map<std::string, std::string>& metadata)
    : dir_(std::move(dir)) {
  NSS_ASSERT(max_shard_bytes > 0, "safetensors", "max_shard_bytes must be positive");
  std::vector<std::vector<SafetensorsTensor>> plan(1);
  std::uint64_t shard_bytes = 0;
  for (const auto& tensor : tensors) {
    const std::uint64_t bytes =
        static_cast<std::uint64_t>(tensor.numel()) * dtype_size(tensor.dtype);
    if (!plan.back().empty() && shard_bytes + bytes > max_shard_bytes) {
      plan.emplace_back();
      shard_bytes = 0;
    }
    plan.back().push_back(tensor);
    shard_bytes += bytes;
    total_bytes_ += bytes;
  }
  const int count = static_cast<int>(plan.size());
  for (int i = 0; i < count; ++i) {
    shard_names_.push_back(count == 1 ? std::string(kWeightsFile) : shard_file_name(i + 1, count));
    for (const auto& tensor : plan[i]) {
      const bool fresh = shard_of_.emplace(tensor.name, static_cast<std::size_t>(i)).second;
      NSS_ASSERT(fresh, "safetensors", "tensor '" + tensor.name + "' declared twice");
    }
    shards_.push_back(
        std::make_unique<SafetensorsWriter>(dir_ + "/" + shard_names_.back(), plan[i], metadata));
  }
}

void HfWeightsWriter::write(const std::string& name, std::int64_t offset, std::int64_t count,
                            const void* data, DType data_dtype) {
  const auto it = shard_of_.find(name);
  NSS_ASSERT(it != shard_of_.end(), "safetensors", "no tensor '" + name + "' in " + dir_);
  shards_[it->second]->write(name, offset, count, data, data_dtype);
}

std::vector<std::string> HfWeightsWriter::file_names() const {
  std::vector<std::string> names = shard_names_;
  if (shard_names_.size() > 1) names.emplace_back(kWeightsIndexFile);
  return names;
}

void HfWeightsWriter::commit() {
  for (auto& shard : shards_) shard->commit();
  if (shards_.size() > 1) {
    nlohmann::json index;
    index["metadata"] = {{"total_size", total_bytes_}};
    index["weight_map"] = nlohmann::json::object();
    for (const auto& [name, shard] : shard_of_) index["weight_map"][name] = shard_names_[shard];
    write_output_file(dir_ + "/" + kWeightsIndexFile, index.dump(2) + "\n", "safetensors");
  }
  // A loader would otherwise find an older single file or index next to the new weights.
  const auto keep = file_names();
  for (const auto& entry : std::filesystem::directory_iterator(dir_)) {
    const std::string name = entry.path().filename().string();
    if (is_weights_file_name(name) && std::find(keep.begin(), keep.end(), name) == keep.end())
      std::filesystem::remove(entry.path());
  }
  fsync_directory(dir_);
}

}  // namespace nss::hf
