// This rank's sharded training state, held in one place: for every FSDP unit
// the fp32 master shard (kept by fsdp::ShardedUnit) and AdamW's two moments,
// laid out and named by layout::ShardedStateLayout; the count of applied
// updates; the optimizer update itself (AdamW on the device, or with
// parallel.offload_optimizer optim::OffloadedAdamW streaming the host-resident
// masters and moments through the device); the same state as the checkpoint
// library reads and writes it (logical tensors and host buffers, through
// pinned host copies of device tensors, or the offloaded host state itself);
// and its bytes by category. The optimizer step, checkpoints and metrics go
// through it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include <torch/types.h>

#include "checkpoint/layout.h"
#include "layout/sharded_state_layout.h"
#include "optim/adamw.h"
#include "optim/offloaded_adamw.h"
#include "train/sharded_llama.h"
#include "train/tensor_parallel_checkpoint.h"

namespace nss::train {

class HostMirror;

class ShardedState {
 public:
  /// The state of `model`'s units: their masters and zeroed moments of the
  /// same shape beside them (on the device, or in host memory when the units
  /// offload; build the model's shards first).
  explicit ShardedState(ShardedLlama& model);
  ~ShardedState();
  ShardedState(const ShardedState&) = delete;
  ShardedState& operator=(const ShardedState&) = delete;

  const layout::ShardedStateLayout& layout() const { return layout_; }

  /// Unit `unit`'s tensor of `kind` (numel 0 for a unit that does not train).
  torch::Tensor& tensor(std::size_t unit, layout::StateTensor kind);
  /// Every unit's tensor of `kind`, in unit order.
  std::vector<torch::Tensor> tensors(layout::StateTensor kind);
  /// Every unit's fp32 master (numel 0 ones included, for a fixed order).
  std::vector<torch::Tensor*> masters();
  /// Every unit's gradient leaf, in the same order: where the backward
  /// accumulates (.grad()), what the norm, clipping and DP-SGD noise act on.
  /// The masters themselves unless the state is offloaded.
  std::vector<torch::Tensor*> gradient_leaves();
  /// Undefines every gradient (their memory is free until the next backward).
  void drop_gradients();

  /// True when the masters and moments live in host memory (parallel.offload_optimizer).
  bool offloaded() const { return offloaded_; }
  /// Staging budget of the offloaded step's two device slots: 256 MiB holds
  /// chunks of 11 M elements, long enough for copies at full PCIe speed and
  /// small beside the gathered units and activations.
  static constexpr std::int64_t kOffloadStagingBytes = optim::kOffloadStagingBudgetBytes;

  /// What AdamW updates without offload: each master with its moments and
  /// weight-decay ranges.
  const std::vector<optim::AdamWShard>& adamw_shards() const { return adamw_shards_; }
  /// Optimizer step number ++applied_updates with `adamw`'s options and
  /// learning rate `lr` on every unit with a gradient: AdamW::step, or the
  /// offloaded step, which also writes the device compute-dtype shards.
  void update(const optim::AdamW& adamw, double lr);
  /// Updates applied so far (skipped steps excluded), as torch's AdamW counts
  /// them for bias correction; saved in checkpoints.
  std::int64_t applied_updates = 0;

  /// The logical tensors a checkpoint holds (the same on every rank).
  const std::vector<checkpoint::TensorSpec>& checkpoint_tensors() const { return tensors_; }
  /// This rank's checkpoint buffers in host memory: the state itself on CPU,
  /// pinned host copies of device tensors otherwise (allocated on first use).
  const std::vector<checkpoint::ShardBuffer>& checkpoint_buffers();
  /// The checkpoint buffers with only the pieces this rank writes: under
  /// hybrid sharding each replica writes 1/R of the shard they all hold
  /// (ShardedStateLayout::buffers_written_by); the same memory.
  const std::vector<checkpoint::ShardBuffer>& saved_buffers();
  /// True when the checkpoint buffers are copies (device tensors): they hold
  /// the values of the last copy_to_host() until the next one.
  bool checkpoint_buffers_are_copies() const;
  /// Device tensors -> checkpoint buffers (a no-op on CPU).
  void copy_to_host();
  /// Checkpoint buffers -> device tensors, after a load (a no-op on CPU); when
  /// offloaded, the device compute-dtype shards from the loaded masters.
  void copy_from_host();

  /// This rank's model state by category (metrics.jsonl's "memory" event).
  struct Bytes {
    std::int64_t masters = 0;
    std::int64_t gradients = 0;  // during backward: one fp32 gradient per master
    std::int64_t moments = 0;
    std::int64_t frozen = 0;                 // the base in the compute dtype
    std::int64_t quantized_base = 0;         // the base's NF4 projections (QLoRA)
    std::int64_t largest_gathered_unit = 0;  // a unit's gathered parameters, compute dtype
    // Offloaded: masters and moments count 0 on the device; the device holds
    // the compute-dtype shards, the host (pinned on CUDA) the fp32 state.
    std::int64_t compute_shards = 0;
    std::int64_t offloaded_host = 0;
    /// On the compute device.
    std::int64_t model_state() const {
      return masters + gradients + moments + frozen + quantized_base + compute_shards;
    }
  };
  Bytes bytes() const;

 private:
  /// Checkpoint buffers over the host mirror's memory, one per layout
  /// buffer, with the pieces this rank loads or (`saving`) saves.
  std::vector<checkpoint::ShardBuffer> host_buffers(const std::vector<layout::StateBuffer>& layout,
                                                    bool saving) const;

  ShardedLlama& model_;
  bool offloaded_;
  layout::ShardedStateLayout layout_;
  std::vector<torch::Tensor> exp_avg_, exp_avg_sq_;
  std::vector<optim::AdamWShard> adamw_shards_;
  std::unique_ptr<optim::OffloadedAdamW> offloaded_adamw_;  // built by the first update()
  std::vector<checkpoint::TensorSpec> tensors_;
  std::optional<TensorParallelCheckpoint> tensor_parallel_;  // tensor_ranks > 1
  std::unique_ptr<HostMirror> mirror_;
  std::vector<checkpoint::ShardBuffer> buffers_;
  std::vector<checkpoint::ShardBuffer> saved_;
};

}  // namespace nss::train
