// What differs between the decoder layers of one model, for the forward:
// the rotary table a layer rotates q and k with (none for SmolLM3's NoPE
// layers; Gemma 3's local layers their own unscaled base) and the window
// its attention keeps (Mistral, Qwen's upper layers, Gemma 3's local
// layers). Built once from arch::describe's plan of the layers, which the
// plans hold for the forward; one table per distinct base, shared by the
// layers that use it.
#pragma once

#include <cstdint>
#include <vector>

#include <torch/types.h>

#include "arch/architecture.h"
#include "config/config.h"
#include "model/rotary_embedding.h"
#include "model/tensor_parallel_ops.h"

namespace nss::model {

/// How one layer computes.
struct LayerPlan {
  const RotaryEmbedding* rope = nullptr;             // nullptr: q and k are not rotated
  std::int64_t window = 0;                           // > 0: the query and window - 1 keys before it
  const arch::Architecture* architecture = nullptr;  // what every block of the model computes
  const TensorParallel* tensor_parallel = nullptr;   // nullptr: the block's tensors are whole
};

class LayerPlans {
 public:
  /// The plans of `model`'s layers with rotary tables for positions
  /// [0, max_positions) on `device`.
  LayerPlans(const config::ModelConfig& model, std::int64_t max_positions, torch::Device device);

  LayerPlan operator[](int layer) const;
  /// Every layer computes its part of the block on `tensor_parallel`'s
  /// ranks from now on (nullptr: whole blocks); it must outlive the plans' use.
  void set_tensor_parallel(const TensorParallel* tensor_parallel) {
    tensor_parallel_ = tensor_parallel;
  }
  int size() const { return static_cast<int>(architecture_.layers.size()); }
  const arch::Architecture& architecture() const { return architecture_; }

 private:
  arch::Architecture architecture_;      // each layer's window and rope_table index tables_
  std::vector<RotaryEmbedding> tables_;  // one per distinct base, in rope_table order
  const TensorParallel* tensor_parallel_ = nullptr;
};

}  // namespace nss::model
