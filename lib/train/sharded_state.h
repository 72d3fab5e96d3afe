// This rank's sharded training state, held in one place: for every FSDP unit
// the fp32 master shard (the unit's autograd leaf, kept by fsdp::ShardedUnit)
// and AdamW's two moments, laid out and named by fsdp::ShardedStateLayout; the
// count of applied updates; the same state as the checkpoint library reads
// and writes it (logical tensors and host buffers, through pinned host copies
// of device tensors); and its bytes by category. The optimizer step,
// checkpoints and metrics go through it.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <torch/types.h>

#include "checkpoint/layout.h"
#include "fsdp/sharded_state_layout.h"
#include "optim/adamw.h"
#include "train/sharded_llama.h"

namespace nss::train {

class HostMirror;

class ShardedState {
 public:
  /// The state of `model`'s units: their masters and zeroed moments of the
  /// same shape, on the masters' device (build the model's shards first).
  explicit ShardedState(ShardedLlama& model);
  ~ShardedState();
  ShardedState(const ShardedState&) = delete;
  ShardedState& operator=(const ShardedState&) = delete;

  const fsdp::ShardedStateLayout& layout() const { return layout_; }

  /// Unit `unit`'s tensor of `kind` (numel 0 for a unit that does not train).
  torch::Tensor& tensor(std::size_t unit, fsdp::StateTensor kind);
  /// Every unit's tensor of `kind`, in unit order.
  std::vector<torch::Tensor> tensors(fsdp::StateTensor kind);
  /// Every unit's master (numel 0 ones included, for a fixed order); their
  /// .grad() is where the backward accumulates.
  std::vector<torch::Tensor*> masters();

  /// What AdamW updates: each master with its moments and weight-decay ranges.
  const std::vector<optim::AdamWShard>& adamw_shards() const { return adamw_shards_; }
  /// Updates applied so far (skipped steps excluded), as torch's AdamW counts
  /// them for bias correction; saved in checkpoints.
  std::int64_t applied_updates = 0;

  /// The logical tensors a checkpoint holds (the same on every rank).
  const std::vector<checkpoint::TensorSpec>& checkpoint_tensors() const { return tensors_; }
  /// This rank's checkpoint buffers in host memory: the state itself on CPU,
  /// pinned host copies of device tensors otherwise (allocated on first use).
  const std::vector<checkpoint::ShardBuffer>& checkpoint_buffers();
  /// True when the checkpoint buffers are copies (device tensors): they hold
  /// the values of the last copy_to_host() until the next one.
  bool checkpoint_buffers_are_copies() const;
  /// Device tensors -> checkpoint buffers (a no-op on CPU).
  void copy_to_host();
  /// Checkpoint buffers -> device tensors, after a load (a no-op on CPU).
  void copy_from_host();

  /// This rank's model state by category (metrics.jsonl's "memory" event).
  struct Bytes {
    std::int64_t masters = 0;
    std::int64_t gradients = 0;  // during backward: one fp32 gradient per master
    std::int64_t moments = 0;
    std::int64_t frozen = 0;                 // the base in the compute dtype
    std::int64_t quantized_base = 0;         // the base's NF4 projections (QLoRA)
    std::int64_t largest_gathered_unit = 0;  // a unit's gathered parameters, compute dtype
    std::int64_t model_state() const {
      return masters + gradients + moments + frozen + quantized_base;
    }
  };
  Bytes bytes() const;

 private:
  ShardedLlama& model_;
  fsdp::ShardedStateLayout layout_;
  std::vector<torch::Tensor> exp_avg_, exp_avg_sq_;
  std::vector<optim::AdamWShard> adamw_shards_;
  std::vector<checkpoint::TensorSpec> tensors_;
  std::unique_ptr<HostMirror> mirror_;
  std::vector<checkpoint::ShardBuffer> buffers_;
};

}  // namespace nss::train
