// One FSDP unit (the embedding, a decoder block, or the final norm + head):
// each of its flat buffers is this rank's shard in a storage
// (fsdp/shard_storage.h) chosen once from ShardOptions: the trainable
// parameters as the fp32 master, on the device and the autograd leaf
// (fsdp/device_shard.h) or with ShardOptions::offload_optimizer in host
// memory behind a device copy and a gradient anchor (fsdp/offloaded_master.h);
// frozen parameters (the LoRA base) in the compute dtype, and QLoRA's
// quantised projections as NF4 bytes (fsdp/quantized_shard.h). The unit
// gathers, prefetches and reduces the same way whatever the storages.
// apply() runs the unit through a custom autograd function
// (fsdp/unit_function.h) that all-gathers the full parameters just in time,
// computes on views of them, frees them, and in backward re-gathers (or, with
// ShardOptions::reshard_after_forward false, takes the buffers it kept),
// recomputes, and reduce-scatters the gradient into a freshly allocated shard
// gradient (docs/architecture.md, "FSDP"). With ShardOptions::prefetch a unit
// starts its neighbour's all-gather before it computes (the next unit in
// forward, the previous one in backward), so that on NCCL the gather runs
// while this unit computes.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <torch/types.h>

#include "comm/communicator.h"
#include "config/choices.h"
#include "fsdp/device_shard.h"
#include "fsdp/kept_segments.h"
#include "fsdp/per_example_gradients.h"
#include "fsdp/quantized_shard.h"
#include "fsdp/shard_storage.h"
#include "layout/flat_layout.h"

namespace nss::fsdp {

struct ShardOptions {
  torch::Dtype compute_dtype = torch::kFloat32;
  torch::Device device = torch::kCPU;
  /// training.activation_checkpointing: full keeps only the unit's input and
  /// recomputes in backward; selective keeps the compute's kept segments
  /// (fsdp/kept_segments.h) too and recomputes the rest; none keeps the
  /// unit's graph and gathered parameters until its backward.
  config::Recompute recompute = config::Recompute::kFull;
  /// Start the neighbouring unit's all-gather before computing (see above);
  /// costs one more unit's gathered parameters in memory.
  bool prefetch = false;
  /// NF4 block scales quantised too (training.lora.double_quant).
  bool double_quant = false;
  /// With recompute (parallel.reshard_after_forward): true
  /// frees the gathered parameters after forward and gathers them again for
  /// the recompute; false keeps them (and the tied unit's) from forward until
  /// the unit's backward: one all-gather per micro-step, every unit's
  /// parameters held at once. Without recompute the graph keeps them.
  bool reshard_after_forward = true;
  /// parallel.offload_optimizer: the trainable buffer's storage is
  /// fsdp::OffloadedMaster (the fp32 master in host memory, a compute-dtype
  /// shard on the device for the gathers, the gradient on a zero-stride
  /// anchor leaf) instead of fsdp::DeviceMaster.
  bool offload_optimizer = false;
};

/// The communicators of a unit: its parameters are sharded over `shard` (all
/// ranks, or under hybrid sharding a group of consecutive ranks); under hybrid
/// sharding each gradient shard is then summed over `replicate`, the ranks
/// that hold the same shard in the other groups (nullptr or size 1: none).
/// `host` spans every rank on host memory, for agreeing on failures (the same
/// as `shard` on CPU without hybrid sharding).
struct ShardComms {
  ShardComms(comm::Communicator& all)  // NOLINT: full sharding over one communicator
      : shard(&all), replicate(nullptr), host(&all) {}
  ShardComms(comm::Communicator& shard_group, comm::Communicator* replica_group,
             comm::Communicator& every_rank)
      : shard(&shard_group), replicate(replica_group), host(&every_rank) {}
  /// True when gradient shards are summed across replicas.
  bool replicated() const { return replicate != nullptr && replicate->size() > 1; }

  comm::Communicator* shard;
  comm::Communicator* replicate;
  comm::Communicator* host;
};

/// A unit's flat buffers: the trainable masters, the frozen base in the
/// compute dtype, and the frozen base stored in NF4.
enum class FlatBuffer { kTrainable, kFrozen, kQuantized };
inline constexpr FlatBuffer kFlatBuffers[] = {FlatBuffer::kTrainable, FlatBuffer::kFrozen,
                                              FlatBuffer::kQuantized};

/// The unit's forward on gathered parameters: `params` are views in
/// layout::FlatLayout::params() order, followed by the tied unit's parameters when
/// there is one. Must be deterministic: backward recomputes it. `kept` is
/// non-null in the forward and the recompute of a selective recompute: the
/// compute runs the segments it wants kept through fsdp::run_segment.
using UnitCompute = std::function<torch::Tensor(
    const torch::Tensor& input, const std::vector<torch::Tensor>& params, KeptSegments* kept)>;

class ShardedUnit {
 public:
  /// `layout` is for the shard group's size.
  ShardedUnit(std::string label, layout::FlatLayout layout, ShardComms comms, ShardOptions options);

  /// Fills this rank's shards from `filler`, reading only the ranges it owns:
  /// fill() (local; it may fail on one rank, e.g. a damaged slice), then
  /// complete_fill() (collective: NF4's double quantisation).
  void materialize(const ParamFiller& filler);
  void fill(const ParamFiller& filler);
  void complete_fill();

  /// Runs the unit on `input`. `tied` (tied embeddings) is another unit whose
  /// parameters are gathered too and whose master receives its share of the gradient.
  torch::Tensor apply(const torch::Tensor& input, const UnitCompute& compute,
                      ShardedUnit* tied = nullptr);

  const std::string& label() const { return label_; }
  const layout::FlatLayout& layout() const { return layout_; }
  const ShardOptions& options() const { return options_; }
  /// The shard group's communicator (this rank's shard is comm().rank()).
  comm::Communicator& comm() { return comm_; }
  const ShardComms& comms() const { return comms_; }

  /// fp32 master shard of the trainable parameters (numel 0 when none); on
  /// the device and the autograd leaf, or in host memory when offloaded.
  torch::Tensor& master() { return trainable_->master(); }
  /// The autograd leaf whose .grad() receives the fp32 gradient shard (on the
  /// device): the master, or the offloaded unit's gradient anchor.
  torch::Tensor& gradient_leaf() { return trainable_->gradient_leaf(); }
  /// Offloaded: the device shard in the compute dtype that the gathers read
  /// and the optimizer step writes (undefined otherwise).
  torch::Tensor& compute_shard() { return trainable_->compute_shard(); }
  /// The master was written outside an optimizer step (a checkpoint load):
  /// the offloaded compute shard := master, cast.
  void master_written() { trainable_->master_written(); }
  /// Frozen shard in the compute dtype (numel 0 when none).
  torch::Tensor& frozen() { return frozen_->shard(); }
  /// The NF4 shard of the quantised projections (nullptr when none).
  const QuantizedShard* quantized() const { return quantized_.get(); }

  /// The units whose gathers this one starts early: the next in forward
  /// order, and the one whose backward runs after this one's (nullptr: none;
  /// a unit that keeps its parameters for its backward is not prefetched for it).
  void set_prefetch_targets(ShardedUnit* forward_next, ShardedUnit* backward_next);
  ShardedUnit* forward_next() const { return forward_next_; }
  ShardedUnit* backward_next() const { return backward_next_; }

  /// DP-SGD: while `sink` is set, backward hands each example's gradient of
  /// the trainable parameters to it instead of reduce-scattering their sum
  /// (the compute then receives them with a leading row dimension,
  /// per_example_gradients.h); nullptr: the summed gradient, as usual.
  void set_per_example(PerExampleGradients* sink) { per_example_ = sink; }
  PerExampleGradients* per_example() const { return per_example_; }

  /// Starts this unit's all-gathers for `phase` unless they are in flight.
  void prefetch(const char* phase);

  /// Waits for and frees a prefetch nobody took (before the optimizer step).
  void drop_prefetched();

  /// One flat buffer gathered in the compute dtype (padded length; the
  /// quantised one dequantised); takes the prefetched gather when it is in
  /// flight and the shard has not changed.
  torch::Tensor gather(FlatBuffer buffer, const char* phase);
  /// Flattens one gradient per trainable parameter (layout order; undefined,
  /// or past the end of `param_grads`, = zero) into fp32 and reduce-scatters
  /// (sum) it into a new shard gradient within the shard group, then sums
  /// that over the replicas (hybrid sharding).
  torch::Tensor reduce_gradient(std::vector<torch::Tensor> param_grads);
  /// Views of the parameters inside gathered buffers, in layout order.
  std::vector<torch::Tensor> views(const torch::Tensor& trainable_full,
                                   const torch::Tensor& frozen_full,
                                   const torch::Tensor& quantized_full) const;

 private:
  /// Every storage this unit owns, in fill order.
  std::vector<ShardStorage*> storages() const;
  InFlightGather start_gather(FlatBuffer buffer, const char* phase);
  void wait(const InFlightGather& gather);

  std::string label_;
  layout::FlatLayout layout_;
  ShardComms comms_;
  comm::Communicator& comm_;  // *comms_.shard
  ShardOptions options_;
  std::unique_ptr<TrainableStorage> trainable_;
  std::unique_ptr<DeviceShard> frozen_;
  std::unique_ptr<QuantizedShard> quantized_;  // nullptr without quantised parameters
  // By FlatBuffer: the storage its gathers read (nullptr: the unit has none
  // of that buffer), and a prefetched gather of it.
  std::array<ShardStorage*, 3> gathered_{};
  std::array<std::optional<InFlightGather>, 3> prefetched_;
  ShardedUnit* forward_next_ = nullptr;
  ShardedUnit* backward_next_ = nullptr;
  PerExampleGradients* per_example_ = nullptr;
};

}  // namespace nss::fsdp
