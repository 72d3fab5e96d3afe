// The execution choices of one run, resolved once from (configuration,
// device kind, world size, this build and its switches): the compute dtype,
// recompute, resharding, prefetch and its order, optimizer offload, how
// packed rows attend, loss chunking and per-example gradients. The runtime (train::shard_options,
// ShardedLlama's forward) and the preflight's memory model both read a RunPlan; neither restates a
// rule.
#pragma once

#include <cstdint>

#include "config/config.h"
#include "core/device_kind.h"
#include "core/dtype.h"

namespace nss::plan {

/// How the rows of packed data (data.packing documents or none) keep their
/// documents apart: causal attention over each document's slice (no work on
/// what a mask would hide), one block-diagonal masked attention over the row
/// (one fused kernel on a GPU beats many small ones), or the variable-length
/// kernels (varlen_attention.h), which fall back to the slices where they
/// cannot run a tensor (dtype, head_dim).
enum class PackedAttention { kPerDocument, kMask, kVarlen };

/// What this process asks for beyond the configuration, in its environment.
struct Switches {
  /// NSS_VARLEN_ATTENTION=1, honoured only where this build has the kernel
  /// (varlen_attention_built()); off until tested on a GPU (docs/gpu.md).
  bool varlen_attention = false;
};

/// True when this build's libtorch has the variable-length attention kernel.
bool varlen_attention_built();

/// True when this build attends through at::scaled_dot_product_attention
/// (libtorch 2), whose kernels keep no scores; false: the explicit softmax
/// (libtorch 1.13), which keeps the attention weights.
bool fused_attention_built();

/// This process's switches, read from its environment once.
const Switches& environment_switches();

/// How packed rows attend on `device`: per document on the CPU; on a GPU the
/// mask, or the variable-length kernels when the switches ask for them.
PackedAttention packed_attention(DeviceKind device, const Switches& switches);

struct RunPlan {
  DeviceKind device = DeviceKind::kCpu;
  int world_size = 1;
  int shard_ranks = 1;   // ranks that shard the model together (parallel.shard_group_size)
  int tensor_ranks = 1;  // parallel.tensor_parallel_size: consecutive ranks that split each layer
  /// parallel.sequence_parallel at tensor_ranks > 1 (false at 1).
  bool sequence_parallel = false;
  config::ComputeDtype compute_dtype = config::ComputeDtype::kFp32;  // never kAuto
  config::Recompute recompute = config::Recompute::kFull;  // training.activation_checkpointing
  /// parallel.reshard_after_forward with auto resolved (true when recomputing).
  bool reshard_after_forward = true;
  /// A unit starts its neighbour's all-gather before computing (on a GPU,
  /// where NCCL overlaps it with compute; a host backend would only hold the
  /// memory longer); the neighbours are forward_prefetch / backward_prefetch.
  bool prefetch = false;
  /// parallel.offload_optimizer on a GPU (on the CPU the state is in host
  /// memory already, and the trainer refuses the key there).
  bool offload_optimizer = false;
  bool packed = false;  // data.packing documents or none
  PackedAttention packed_attention = PackedAttention::kPerDocument;
  bool fused_attention = false;        // fused_attention_built(): SDPA's kernels, no kept scores
  std::int64_t loss_chunk_tokens = 0;  // training.loss_chunk_tokens (0: unchunked head)
  bool per_example = false;            // DP-SGD's per-example gradients (privacy.enabled)

  /// Ranks that read different batches (world_size / tensor_ranks).
  int data_ranks() const { return world_size / tensor_ranks; }
  DType element_type() const;
  std::int64_t compute_bytes() const;  // 4 fp32, 2 bf16
  bool recomputes() const { return recompute != config::Recompute::kNone; }
  /// The unit whose all-gather `unit`'s forward starts early (forward runs
  /// the units in order): the next one; -1 for none or without prefetch.
  int forward_prefetch(int unit, int units) const;
  /// The unit whose all-gather `unit`'s backward starts early (backward runs
  /// in reverse, the embedding's only when it trains); -1 for none.
  int backward_prefetch(int unit, bool embedding_trains) const;
};

/// The plan of `config` computing on `device` with `world_size` ranks.
RunPlan make_run_plan(const config::Config& config, DeviceKind device, int world_size,
                      const Switches& switches = environment_switches());

}  // namespace nss::plan
