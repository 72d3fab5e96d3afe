#include "preflight/memory_model.h"

#include <algorithm>

#include "arch/architecture.h"
#include "config/derived.h"
#include "config/size_checks.h"
#include "layout/sharded_state_layout.h"
#include "model/unit_layouts.h"
#include "optim/offload_plan.h"
#include "plan/run_plan.h"
#include "preflight/gather_replay.h"
#include "preflight/per_example_memory.h"
#include "preflight/unit_activations.h"
#include "quant/nf4_storage.h"

namespace nss::preflight {
namespace {

using Part = MemoryPart;

// The sharded state's fp32 master is counted apart from the optimizer's tensors.
Part part_of(layout::StateTensor kind) {
  return kind == layout::StateTensor::kMaster ? Part::kMasters : Part::kOptimizerState;
}

std::string state_id(layout::StateTensor kind, int unit) {
  return "state" + std::to_string(static_cast<int>(kind)) + "." + std::to_string(unit);
}

std::uint64_t u64(std::int64_t v) {
  return static_cast<std::uint64_t>(v);
}

// A tensor rank computes its heads, its MLP features and its rows of the
// vocabulary, the loss always by the chunked head (one chunk of every token
// when unchunked); with sequence parallelism its part of the residual stream.
void tensor_parallel_part(UnitShapes& s, const arch::TensorParallelPlan& plan,
                          bool sequence_parallel) {
  s.heads = plan.heads_per_rank;
  s.kv_heads = plan.kv_heads_per_rank;
  s.intermediate = plan.intermediate_per_rank;
  s.vocab = plan.padded_vocab / plan.size;
  if (s.loss_chunk_tokens == 0) s.loss_chunk_tokens = s.tokens();
  if (sequence_parallel) s.sequence_parts = plan.size;
}

// Whether a layer attends in a window shorter than the sequence: it passes
// a mask to the attention, which the fused kernels' accounting leaves out.
bool has_masked_layers(const config::Config& config) {
  const arch::Architecture architecture = arch::describe(config.model);
  return std::any_of(architecture.layers.begin(), architecture.layers.end(),
                     [&](const arch::Layer& layer) {
                       return layer.sliding && layer.window < config.data.seq_len;
                     });
}

UnitShapes shapes_of(const config::Config& config, const plan::RunPlan& plan,
                     std::int64_t micro_batch, const std::vector<std::int64_t>& packed_row_spans) {
  const auto& m = config.model;
  const auto& lora = config.training.lora;
  UnitShapes s;
  s.batch = micro_batch;
  s.seq = config.data.seq_len;
  s.hidden = m.hidden_size;
  s.intermediate = m.intermediate_size;
  s.heads = m.num_attention_heads;
  s.kv_heads = m.num_key_value_heads > 0 ? m.num_key_value_heads : m.num_attention_heads;
  s.head_dim = m.head_dim > 0 ? m.head_dim : m.hidden_size / m.num_attention_heads;
  s.vocab = m.vocab_size;
  s.compute_bytes = plan.compute_bytes();
  s.lora = lora.enabled;
  s.lora_targets = lora.targets;
  s.lora_rank = lora.rank;
  s.lora_dropout = lora.dropout > 0;
  s.packed = plan.packed;
  // The variable-length kernels are counted as the slices they fall back to
  // (an upper bound: flash attention keeps no scores); the mask as one
  // block-diagonal softmax over the row.
  s.rows_apart = s.packed && plan.packed_attention != plan::PackedAttention::kMask;
  if (s.rows_apart) s.row_spans = packed_row_spans;
  s.per_example = plan.per_example;
  s.loss_chunk_tokens = plan.loss_chunk_tokens;
  s.casts_by_copy = plan.device == DeviceKind::kCpu;
  s.fused_attention = plan.fused_attention && !s.packed && !has_masked_layers(config);
  const arch::Family& family = arch::family(m.family);
  s.qk_norm = family.qk_norm;
  s.sandwich_norms = family.sandwich_norms;
  s.one_plus_norms = family.norm_scale == arch::NormScale::kOnePlusWeight;
  if (plan.tensor_ranks > 1)
    tensor_parallel_part(s, model::tensor_parallel_plan(config), plan.sequence_parallel);
  return s;
}

// One rank's training step, replayed.
class StepReplay {
 public:
  StepReplay(const config::Config& config, const plan::RunPlan& plan, std::int64_t micro_batch,
             const std::vector<std::int64_t>& packed_row_spans)
      : config_(config),
        plan_(plan),
        s_(shapes_of(config, plan, micro_batch, packed_row_spans)),
        state_(model::unit_layouts(config, plan.world_size), 0),
        c_(u64(s_.compute_bytes)),
        last_(static_cast<int>(state_.units().size()) - 1),
        tied_(config.model.tie_word_embeddings),
        double_quant_(config.training.lora.double_quant),
        gathers_(t_, state_, {c_, double_quant_, plan.prefetch, plan.offload_optimizer, tied_}) {}

  StepMemory run() {
    allocate_state();
    if (plan_.per_example) {
      private_step();
    } else {
      const std::int64_t micro_steps =
          config::accumulation_steps(config_, plan_.world_size, s_.batch);
      // The step reads all its micro-batches before the first forward (the
      // loss weight needs the global target count).
      t_.set_phase("forward");
      t_.allocate("step.batches", u64(micro_steps) * batch_bytes(), Part::kBatchTokens);
      // Every later micro-batch is like the second: the gradients already exist.
      for (std::int64_t micro = 0; micro < std::min<std::int64_t>(micro_steps, 2); ++micro)
        micro_step();
      t_.free("step.batches");
      t_.free("weights.prev");
      t_.free_if_live("documents.prev");
      hold_last_batch();
    }
    optimizer_step();
    StepMemory result;
    result.peak_bytes = t_.peak();
    result.peak_phase = t_.peak_phase();
    result.state_bytes = state_bytes_;
    result.pinned_host_bytes = pinned_host_bytes_;
    result.base_bytes_per_parameter = base_bytes_per_parameter();
    for (std::size_t p = 0; p < static_cast<std::size_t>(Part::kCount); ++p)
      result.components.push_back({memory_part_name(static_cast<Part>(p)), t_.peak_parts()[p]});
    return result;
  }

 private:
  std::string id(const char* what, int unit) const { return what + std::to_string(unit); }
  const layout::FlatLayout& layout(int unit) const {
    return state_.units()[static_cast<std::size_t>(unit)];
  }
  bool trainable(int unit) const { return layout(unit).numel(true) > 0; }
  bool quantized(int unit) const { return layout(unit).quantized_numel() > 0; }

  std::optional<double> base_bytes_per_parameter() const {
    double bytes = 0, parameters = 0;
    for (const auto& unit : state_.units()) {
      for (const auto& p : unit.params()) {
        if (p.trainable) continue;
        parameters += static_cast<double>(p.numel());
        // Double quantisation adds the tensor's fp32 mean.
        bytes += p.quantized
                     ? static_cast<double>(quant::nf4_storage(p.numel(), double_quant_).total() +
                                           (double_quant_ ? 4 : 0))
                     : static_cast<double>(p.numel() * s_.compute_bytes);
      }
    }
    if (parameters == 0) return std::nullopt;
    return bytes / parameters;
  }
  bool checkpointing() const { return plan_.recomputes(); }
  // One micro-batch's inputs, targets and target mask, and for packed rows
  // positions and segments.
  std::uint64_t batch_bytes() const {
    return u64(s_.tokens()) * (8 + 8 + 4 + (s_.packed ? 16 : 0));
  }

  // parallel.offload_optimizer: the chunk plan of ShardedState's staging
  // budget over this rank's shards.
  optim::OffloadPlan offload_plan() const {
    std::vector<std::int64_t> shards;
    for (const auto& unit : state_.units()) shards.push_back(unit.shard_size(true));
    return optim::plan_offload(shards, std::vector<std::vector<optim::ElementRange>>(shards.size()),
                               optim::offload_chunk_elements(optim::kOffloadStagingBudgetBytes));
  }

  void allocate_state() {
    t_.set_phase("model and optimizer state");
    for (int u = 0; u <= last_; ++u) {
      const auto unit = static_cast<std::size_t>(u);
      for (const layout::StateTensor kind : layout::kStateTensors) {
        if (plan_.offload_optimizer) {  // in pinned host memory
          pinned_host_bytes_ += u64(state_.bytes(unit, kind));
          continue;
        }
        t_.allocate(state_id(kind, u), u64(state_.bytes(unit, kind)), part_of(kind));
      }
      // Offloaded, the device keeps the master in the compute dtype for the gathers.
      if (plan_.offload_optimizer)
        t_.allocate(id("compute", u), u64(layout(u).shard_size(true)) * c_, Part::kMasters);
      t_.allocate(id("frozen", u), u64(state_.frozen_bytes(unit, s_.compute_bytes)),
                  Part::kFrozenShards);
      if (quantized(u))
        t_.allocate(id("nf4", u), u64(state_.quantized_bytes(unit, double_quant_)),
                    Part::kFrozenShards);
    }
    // The offloaded step's two staging slots, kept from the first step on.
    if (plan_.offload_optimizer)
      t_.allocate("staging", u64(offload_plan().staging_bytes()), Part::kOptimizerTemporaries);
    // model::LayerPlans' cos and sin tables, fp32 [seq_len, head_dim], one
    // pair per distinct RoPE base.
    const auto tables = u64(arch::describe(config_.model).rope_tables);
    t_.allocate("rope", tables * 2 * u64(s_.seq * s_.head_dim) * 4, Part::kRopeTables);
    state_bytes_ = t_.now();
    hold_last_batch();
  }

  // reduce_gradient: the flat fp32 gradient, the parameter gradients copied
  // into it and freed, a fresh shard gradient; autograd accumulates it into
  // the master's .grad (in place when one exists).
  //
  // A tied embedding is an input of two unit functions, so the engine holds
  // the head's gradient for it in the embedding master's input buffer until
  // the embedding's own arrives (`tied_from_head`); only then does it
  // accumulate. On the first micro-batch that pending shard becomes .grad.
  void reduce(int unit, const std::string& grads_prefix, bool tied_from_head = false) {
    const std::uint64_t shard_bytes = u64(layout(unit).shard_size(true)) * 4;
    t_.allocate("flat", u64(layout(unit).padded(true)) * 4, Part::kUnitGradientBuffers);
    t_.free_matching(grads_prefix);
    t_.allocate("new_grad", shard_bytes, Part::kUnitGradientBuffers);
    t_.free("flat");
    if (t_.live(id("grad", unit))) {
      if (tied_from_head)
        t_.rename("new_grad", "tied_pending");
      else
        t_.free("new_grad");
    } else {
      t_.free("new_grad");
      t_.allocate(id("grad", unit), shard_bytes, Part::kGradients);
    }
    if (!tied_from_head) t_.free_if_live("tied_pending");  // summed, then accumulated
  }

  void micro_step() {
    t_.set_phase("forward");
    // The loss weights (mask / T), and for packed rows the [B, 1, S, S] bool
    // mask built once per micro-batch; the model keeps them until the next.
    t_.allocate("weights", u64(s_.tokens()) * 4, Part::kBatchTokens);
    if (s_.packed && !s_.rows_apart)
      t_.allocate("documents", u64(s_.tokens() * s_.seq), Part::kBatchTokens);
    t_.free_if_live("last_batch");
    t_.free_if_live("targets.prev");
    t_.free_if_live("weights.prev");
    t_.free_if_live("documents.prev");
    forward();
    backward();
    t_.rename("weights", "weights.prev");
    if (t_.live("documents")) t_.rename("documents", "documents.prev");
  }

  // Between steps the model still holds the last micro-batch's targets,
  // target mask, weights and (packed) attention mask.
  void hold_last_batch() {
    t_.allocate("last_batch",
                u64(s_.tokens()) * (8 + 4 + 4) +
                    (s_.packed && !s_.rows_apart ? u64(s_.tokens() * s_.seq) : 0),
                Part::kBatchTokens);
  }

  UnitCall call(int unit, bool grad_mode) const {
    UnitCall c;
    c.prefix = "u" + std::to_string(unit) + ".";
    c.input_requires_grad = input_requires_grad(unit);
    c.grad_mode = grad_mode;
    // Selective recompute keeps a block's attention from forward to backward.
    c.keeps_attention = plan_.recompute == config::Recompute::kSelective && unit > 0 &&
                        unit < last_ && has_backward(unit);
    return c;
  }

  // A block's input requires grad when anything before it trains: the
  // embedding (full training) or an adapter in an earlier block (LoRA).
  bool input_requires_grad(int unit) const {
    if (unit == 0) return false;
    if (!s_.lora) return true;
    return unit > 1 && !s_.lora_targets.empty();
  }

  // Whether autograd records the unit at all (something in it requires grad).
  bool has_backward(int unit) const {
    return trainable(unit) || input_requires_grad(unit) || (unit == last_ && tied_ && trainable(0));
  }

  // Without checkpointing a unit keeps its graph and gathered parameters.
  bool keeps_graph(int unit) const { return !checkpointing() && has_backward(unit); }

  // parallel.reshard_after_forward false with checkpointing: the unit keeps
  // its gathered parameters (the head its tied embedding's too) from its
  // forward until its backward recomputes from them, no second gather.
  bool keeps_parameters(int unit) const {
    return checkpointing() && !plan_.reshard_after_forward && has_backward(unit);
  }

  void forward() {
    for (int u = 0; u <= last_; ++u) {
      t_.set_phase("forward of " + model::unit_label(u, last_ + 1));
      const bool keep = keeps_graph(u);
      const UnitCall c = call(u, keep);
      gathers_.gather_unit(u, c.prefix);
      gathers_.prefetch(plan_.forward_prefetch(u, last_ + 1));
      if (u == 0)
        embedding_forward(t_, s_, c, id("act", 0));
      else if (u < last_)
        block_forward(t_, s_, c, id("act", u));
      else
        head_forward(t_, s_, c);
      if (!keep && !keeps_parameters(u)) gathers_.release(c.prefix);
    }
  }

  void backward() {
    std::string grad_in;  // the gradient flowing into the unit being processed
    for (int u = last_; u >= 0; --u) {
      const UnitCall c = call(u, true);
      const bool reached = u == last_ || !grad_in.empty();
      if (!reached) break;
      if (u == 0 && !trainable(0)) break;
      t_.set_phase("backward of " + model::unit_label(u, last_ + 1));
      const bool recompute = checkpointing();
      if (recompute && !keeps_parameters(u)) {  // gather again
        gathers_.gather_unit(u, c.prefix);
        // The unit whose backward comes next (the embedding's only when it trains).
        gathers_.prefetch(plan_.backward_prefetch(u, trainable(0)));
      }
      if (recompute) {  // rebuild the unit's graph
        if (u == 0) embedding_forward(t_, s_, c, c.prefix + "out");
        if (u > 0 && u < last_) block_forward(t_, s_, c, c.prefix + "out");
        if (u == last_) head_forward(t_, s_, c);
      }
      std::string grad_x;
      if (u == 0)
        embedding_backward(t_, s_, c);
      else if (u < last_)
        grad_x = block_backward(t_, s_, c);
      else
        grad_x = head_backward(t_, s_, c, tied_);
      // The graph's output, then the gathered parameters, go before the reduction.
      if (u < last_) t_.free(recompute ? c.prefix + "out" : id("act", u));
      gathers_.release(c.prefix);
      if (trainable(u) && plan_.per_example)
        hold_per_example(t_, layout(u), u, c.prefix + "pg.", s_.batch, s_.compute_bytes);
      else if (trainable(u))
        reduce(u, c.prefix + "pg.");
      if (u == last_ && tied_ && trainable(0)) reduce(0, c.prefix + "tg.", true);
      if (recompute && u > 0) t_.free(id("act", u - 1));  // the input it saved
      if (!grad_in.empty()) t_.free(grad_in);
      grad_in = grad_x;
    }
    if (!grad_in.empty()) t_.free(grad_in);
    for (int u = 0; u <= last_; ++u) t_.free_if_live(id("act", u));
  }

  // DP-SGD (train/private_step.h): the micro-batches are read one by one,
  // and every step may run two or more of them (a Poisson batch's size
  // varies), so the replay always runs two: from the second on the clipped
  // sums exist. At the step's end each unit's clipped sum is reduce-scattered
  // into its shard gradient and the noise is added, unit by unit.
  void private_step() {
    for (int micro = 0; micro < 2; ++micro) {
      t_.set_phase("forward");
      t_.allocate("batch.targets", u64(s_.tokens()) * 8, Part::kBatchTokens);
      t_.allocate("batch.rest", batch_bytes() - u64(s_.tokens()) * 8, Part::kBatchTokens);
      micro_step();
      clip_per_example(t_, state_.units(), s_.batch);
      t_.free("batch.rest");  // the model keeps the targets until the next micro-batch
      t_.rename("batch.targets", "targets.prev");
    }
    t_.set_phase("gradient reduction");
    for (int u = 0; u <= last_; ++u) {
      if (!trainable(u)) continue;
      reduce(u, clipped_sum_id(u));
      t_.transient(u64(layout(u).shard_size(true)) * 4, Part::kUnitGradientBuffers);  // noise
    }
  }

  void optimizer_step() {
    t_.set_phase("optimizer step");
    if (plan_.offload_optimizer) {  // AdamW's temporaries per staged chunk
      std::int64_t largest = 0;
      for (const auto& chunk : offload_plan().chunks) largest = std::max(largest, chunk.count);
      t_.transient(2 * u64(largest) * 4, Part::kOptimizerTemporaries);
      return;
    }
    // AdamW: sqrt(exp_avg_sq) and its quotient live together, unit by unit.
    for (int u = 0; u <= last_; ++u)
      t_.transient(2 * u64(layout(u).shard_size(true)) * 4, Part::kOptimizerTemporaries);
  }

  const config::Config& config_;
  const plan::RunPlan& plan_;
  UnitShapes s_;
  layout::ShardedStateLayout state_;
  std::uint64_t c_;
  int last_;
  bool tied_;
  bool double_quant_;
  MemoryTimeline t_;
  GatherReplay gathers_;
  std::uint64_t state_bytes_ = 0;
  std::uint64_t pinned_host_bytes_ = 0;
};

}  // namespace

StepMemory predict_step_memory(const config::Config& config, int world_size, DeviceKind device,
                               std::int64_t micro_batch_size,
                               const std::vector<std::int64_t>& packed_row_spans) {
  return predict_step_memory(config, plan::make_run_plan(config, device, world_size),
                             micro_batch_size, packed_row_spans);
}

StepMemory predict_step_memory(const config::Config& config, const plan::RunPlan& plan,
                               std::int64_t micro_batch_size,
                               const std::vector<std::int64_t>& packed_row_spans) {
  // The replay multiplies and adds the shapes unchecked: within these bounds
  // no byte count leaves 64 bits (size_checks.h).
  if (!config::micro_batch_fits(config, micro_batch_size)) {
    StepMemory beyond;
    beyond.peak_bytes = kUnreplayableBytes;
    beyond.peak_phase = "a micro-batch of " + std::to_string(micro_batch_size) +
                        " sequences, whose tensors exceed 2^44 elements (not replayed)";
    return beyond;
  }
  return StepReplay(config, plan, micro_batch_size, packed_row_spans).run();
}

}  // namespace nss::preflight
