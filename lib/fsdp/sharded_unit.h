// One FSDP unit (the embedding, a decoder block, or the final norm + head):
// its trainable parameters live as this rank's fp32 master shard, an autograd
// leaf; frozen parameters (the LoRA base) as a shard in the compute dtype, or
// for QLoRA's quantised projections as NF4 bytes (fsdp/quantized_shard.h),
// gathered as bytes and dequantised into the compute dtype per use. With
// ShardOptions::offload_optimizer the master is in host memory, the device
// holds a compute-dtype copy that the gathers read, and a zero-stride fp32
// "gradient anchor" is the autograd leaf that receives the gradient.
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

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <torch/types.h>

#include "comm/communicator.h"
#include "config/choices.h"
#include "fsdp/kept_segments.h"
#include "fsdp/per_example_gradients.h"
#include "fsdp/quantized_shard.h"
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
  /// parallel.offload_optimizer: the fp32 master in host memory (pinned on
  /// CUDA, optim::OffloadedAdamW::host_tensor), a compute-dtype shard on the
  /// device for the gathers, and the gradient on a zero-stride anchor leaf.
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

/// Writes elements [offset, offset + count) of a parameter's row-major
/// flattening as fp32 (deterministic init, or slices of pretrained files).
using ParamFiller = std::function<void(const layout::FlatParam& param, std::int64_t offset,
                                       std::int64_t count, float* out)>;

class ShardedUnit {
 public:
  /// `layout` is for the shard group's size.
  ShardedUnit(std::string label, layout::FlatLayout layout, ShardComms comms, ShardOptions options);

  /// Fills this rank's shards from `filler`, reading only the ranges it owns:
  /// fill() (local; it may fail on one rank, e.g. a damaged slice), then
  /// finish_quantization() (collective with double quantisation).
  void materialize(const ParamFiller& filler);
  void fill(const ParamFiller& filler);
  void finish_quantization();

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
  torch::Tensor& master() { return master_; }
  /// The autograd leaf whose .grad() receives the fp32 gradient shard (on the
  /// device): the master, or the offloaded unit's gradient anchor.
  torch::Tensor& gradient_leaf() { return options_.offload_optimizer ? anchor_ : master_; }
  /// Offloaded: the device shard in the compute dtype that the gathers read
  /// and the optimizer step writes (undefined otherwise).
  torch::Tensor& compute_shard() { return compute_; }
  /// Offloaded: the compute-dtype shard := master, cast (after a checkpoint
  /// load changed the master); a no-op otherwise.
  void refresh_compute_shard();
  /// Frozen shard in the compute dtype (numel 0 when none).
  torch::Tensor& frozen() { return frozen_; }
  /// The NF4 shard of the quantised projections (nullptr when none).
  const QuantizedShard* quantized() const { return quantized_ ? &*quantized_ : nullptr; }

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
  bool holds(FlatBuffer buffer) const;
  /// What the trainable gathers read: the master, or the offloaded compute shard.
  const torch::Tensor& trainable_source() const {
    return options_.offload_optimizer ? compute_ : master_;
  }
  std::int64_t shard_version(FlatBuffer buffer) const;
  InFlightGather start_gather(FlatBuffer buffer, const char* phase);
  void wait(const InFlightGather& gather);

  std::string label_;
  layout::FlatLayout layout_;
  ShardComms comms_;
  comm::Communicator& comm_;  // *comms_.shard
  ShardOptions options_;
  torch::Tensor master_;
  torch::Tensor compute_;  // offloaded only
  torch::Tensor anchor_;   // offloaded only
  torch::Tensor frozen_;
  std::optional<QuantizedShard> quantized_;
  std::optional<InFlightGather> prefetched_[3];  // by FlatBuffer
  ShardedUnit* forward_next_ = nullptr;
  ShardedUnit* backward_next_ = nullptr;
  PerExampleGradients* per_example_ = nullptr;
};

}  // namespace nss::fsdp
