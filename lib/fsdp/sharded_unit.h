// One FSDP unit (the embedding, a decoder block, or the final norm + head):
// its trainable parameters live as this rank's fp32 master shard, an autograd
// leaf; frozen parameters (the LoRA base) as a shard in the compute dtype.
// apply() runs the unit through a custom autograd function that all-gathers
// the full parameters just in time, computes on views of them, frees them,
// and in backward re-gathers, recomputes, and reduce-scatters the gradient
// into a freshly allocated shard gradient (docs/architecture.md, "FSDP").
// With ShardOptions::prefetch a unit starts its neighbour's all-gather before
// it computes (the next unit in forward, the previous one in backward), so
// that on NCCL the gather runs while this unit computes.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <torch/types.h>

#include "comm/communicator.h"
#include "fsdp/flat_layout.h"

namespace nss::fsdp {

struct ShardOptions {
  torch::Dtype compute_dtype = torch::kFloat32;
  torch::Device device = torch::kCPU;
  /// true: keep only the unit's input and recompute in backward;
  /// false: keep the unit's graph and gathered parameters until its backward.
  bool activation_checkpointing = true;
  /// Start the neighbouring unit's all-gather before computing (see above);
  /// costs one more unit's gathered parameters in memory.
  bool prefetch = false;
};

/// The unit's forward on gathered parameters: `params` are views in
/// FlatLayout::params() order, followed by the tied unit's parameters when
/// there is one. Must be deterministic: backward recomputes it.
using UnitCompute = std::function<torch::Tensor(const torch::Tensor& input,
                                                const std::vector<torch::Tensor>& params)>;

/// Writes elements [offset, offset + count) of a parameter's row-major
/// flattening as fp32 (deterministic init, or slices of pretrained files).
using ParamFiller = std::function<void(const FlatParam& param, std::int64_t offset,
                                       std::int64_t count, float* out)>;

class ShardedUnit {
 public:
  ShardedUnit(std::string label, FlatLayout layout, comm::Communicator& comm, ShardOptions options);

  /// Fills this rank's shards from `filler`, reading only the ranges it owns.
  void materialize(const ParamFiller& filler);

  /// Runs the unit on `input`. `tied` (tied embeddings) is another unit whose
  /// parameters are gathered too and whose master receives its share of the gradient.
  torch::Tensor apply(const torch::Tensor& input, const UnitCompute& compute,
                      ShardedUnit* tied = nullptr);

  const std::string& label() const { return label_; }
  const FlatLayout& layout() const { return layout_; }
  const ShardOptions& options() const { return options_; }
  comm::Communicator& comm() { return comm_; }

  /// fp32 master shard of the trainable parameters (numel 0 when none).
  torch::Tensor& master() { return master_; }
  /// Frozen shard in the compute dtype (numel 0 when none).
  torch::Tensor& frozen() { return frozen_; }

  /// The units whose gathers this one starts early: the next in forward
  /// order, and the one whose backward runs after this one's (nullptr: none).
  void set_prefetch_targets(ShardedUnit* forward_next, ShardedUnit* backward_next);
  ShardedUnit* forward_next() const { return forward_next_; }
  ShardedUnit* backward_next() const { return backward_next_; }

  /// Starts this unit's all-gathers for `phase` unless they are in flight.
  void prefetch(const char* phase);

  /// Waits for and frees a prefetch nobody took (before the optimizer step).
  void drop_prefetched();

  /// All-gathers one flat buffer in the compute dtype (padded length); takes
  /// the prefetched one when it is in flight and the shard has not changed.
  torch::Tensor gather(bool trainable, const char* phase);
  /// Flattens one gradient per trainable parameter (layout order; undefined =
  /// zero) into fp32 and reduce-scatters (sum) it into a new shard gradient.
  torch::Tensor reduce_gradient(std::vector<torch::Tensor> param_grads);
  /// Views of the parameters inside gathered buffers, in layout order.
  std::vector<torch::Tensor> views(const torch::Tensor& trainable_full,
                                   const torch::Tensor& frozen_full) const;

 private:
  // A started all-gather: the buffers stay alive until it has been waited on.
  struct InFlightGather {
    torch::Tensor send, full;
    comm::CollectiveTicket ticket = 0;
    std::int64_t shard_version = 0;  // of the shard when started
  };
  InFlightGather start_gather(bool trainable, const char* phase);

  std::string label_;
  FlatLayout layout_;
  comm::Communicator& comm_;
  ShardOptions options_;
  torch::Tensor master_;
  torch::Tensor frozen_;
  std::optional<InFlightGather> prefetched_[2];  // [trainable], [frozen]
  ShardedUnit* forward_next_ = nullptr;
  ShardedUnit* backward_next_ = nullptr;
};

}  // namespace nss::fsdp
