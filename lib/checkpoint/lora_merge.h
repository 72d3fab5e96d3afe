// Merged LoRA weights for --merge-lora: every tensor of the base model, with
// W + (alpha / r) * B @ A for each weight the checkpoint holds adapters for,
// streamed in row windows under the memory budget. The base model is read
// through memory maps whose pages are dropped once used, so resident memory
// stays bounded however large the base is.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "checkpoint/checkpoint_reader.h"
#include "config/config.h"
#include "hf/safetensors_file.h"

namespace nss::checkpoint {

/// Base weights replaced by their whole-tensor NF4 round trip
/// (--dequantized-base; `double_quant` as the run trained); each is held
/// whole, so the largest needs its size in 4-byte elements of the budget.
struct RoundedBase {
  std::set<std::string> tensors;
  bool double_quant = false;
};

class LoraMerger {
 public:
  /// Opens the base model directory `base_dir` and pairs every adapter of
  /// `reader`'s step with its base weight. Throws DataError when the base
  /// cannot be opened, CheckpointError when an adapter does not fit its base
  /// weight, UsageError when `budget` cannot hold one adapter's A plus a checksum
  /// block and a row.
  /// `rounded`: base weights replaced by their NF4 round trip (RoundedBase).
  LoraMerger(CheckpointReader& reader, const std::string& base_dir, double scale,
             std::uint64_t budget, RoundedBase rounded = {});

  /// The base model's configuration (config.json).
  const config::ModelConfig& base_config() const { return base_config_; }

  /// Every tensor of the merged model, in the base's order of names, as `dtype`.
  std::vector<hf::SafetensorsTensor> tensors(DType dtype) const;

  /// Streams every tensor as float32 windows: sink(name, offset, count, data).
  /// DataError (exit 4) for a base weight or an adapter value that is not finite.
  void write(const std::function<void(const std::string&, std::int64_t, std::int64_t,
                                      const float*)>& sink);

  /// Weights that received an adapter.
  std::size_t merged_count() const { return adapters_.size(); }

 private:
  struct Source {
    std::shared_ptr<const hf::SafetensorsFile> file;
    const hf::SafetensorsTensor* tensor = nullptr;
  };
  struct Adapter {
    std::string a, b;  // checkpoint tensor names
    std::int64_t rank = 0;
  };

  void copy(const std::string& name, const Source& source,
            const std::function<void(const std::string&, std::int64_t, std::int64_t, const float*)>&
                sink);
  void merge(const std::string& name, const Source& source, const Adapter& adapter,
             const std::function<void(const std::string&, std::int64_t, std::int64_t,
                                      const float*)>& sink);
  void read_checkpoint_float(const std::string& tensor, std::int64_t offset, std::int64_t count,
                             float* out);
  // Elements [offset, offset + count) of base weight `name` as float32.
  void read_base(const std::string& name, const Source& source, std::int64_t offset,
                 std::int64_t count, float* out);

  CheckpointReader& reader_;
  double scale_;
  std::uint64_t budget_;
  config::ModelConfig base_config_;
  std::map<std::string, Source> base_;
  std::map<std::string, Adapter> adapters_;  // base weight name -> adapter
  std::vector<char> raw_;
  RoundedBase rounded_;
  std::string rounded_name_;  // the base weight whose round trip rounded_values_ holds
  std::vector<float> rounded_values_;
};

}  // namespace nss::checkpoint
