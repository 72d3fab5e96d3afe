#include "preflight/unit_activations.h"

#include <algorithm>

#include "preflight/activation_bytes.h"

namespace nss::preflight {
namespace {

using namespace activations;  // NOLINT: the byte terms of activation_bytes.h
using Part = MemoryPart;

struct Projection {
  const char* id;
  std::int64_t in, out;
};

// What a block's autograd records, from which tensors require grad (the
// frozen base under LoRA, adapters on some projections, the input).
struct Block {
  const UnitShapes& s;
  Bytes b;
  bool base, x, y1, q, k, v, scores, att, h, up, gate, prod;
  bool split;  // sequence parallelism: the residual stream holds part of the sequence
  std::vector<Projection> projections;

  Block(const UnitShapes& shapes, bool input_grad) : s(shapes), b(shapes) {
    const std::int64_t q_out = s.heads * s.head_dim, kv_out = s.kv_heads * s.head_dim;
    projections = {{"q_proj", s.hidden, q_out},
                   {"k_proj", s.hidden, kv_out},
                   {"v_proj", s.hidden, kv_out},
                   {"o_proj", q_out, s.hidden},
                   {"gate_proj", s.hidden, s.intermediate},
                   {"up_proj", s.hidden, s.intermediate},
                   {"down_proj", s.intermediate, s.hidden}};
    base = !s.lora;
    split = b.ns != b.n;
    x = input_grad;
    y1 = x || base;
    q = y1 || adapted(0);
    k = y1 || adapted(1);
    v = y1 || adapted(2);
    scores = q || k;
    att = scores || v;
    h = x || att || adapted(3);
    const bool y2 = h || base;
    up = y2 || adapted(5);
    gate = y2 || adapted(4);
    prod = up || gate;
  }
  bool adapted(int p) const { return s.adapted(projections[static_cast<std::size_t>(p)].id); }
  // A linear layer saves its input when its weight trains, or a LoRA
  // adapter reads it directly (no dropout in between).
  bool saves_input(int p) const { return base || (adapted(p) && !s.lora_dropout); }
  // Bytes of projection p's input for this micro-batch.
  std::uint64_t input_bytes(int p) const {
    return b.n * u64(projections[static_cast<std::size_t>(p)].in) * b.c;
  }
  // An adapter keeps A's output, and with dropout the dropped input (and the
  // mask product when the input requires grad).
  std::uint64_t adapter_graph(int p, bool input_grad) const {
    if (!adapted(p)) return 0;
    return b.n * u64(s.lora_rank) * b.c +
           when(s.lora_dropout, input_bytes(p) + when(input_grad, input_bytes(p)));
  }
  // Parameter gradients of projection p: the base weight, or the adapters
  // (one per example under DP-SGD).
  std::uint64_t weight_grads(int p) const {
    const auto& pr = projections[static_cast<std::size_t>(p)];
    if (base) return u64(pr.in * pr.out) * b.c;
    if (!adapted(p)) return 0;
    return u64((pr.in + pr.out) * s.lora_rank) * b.c * (s.per_example ? u64(s.batch) : 1);
  }
  std::uint64_t norm_weight_grads() const { return when(base, 2 * u64(s.hidden) * b.c); }

  bool y1_saved() const { return y1 && (saves_input(0) || saves_input(1) || saves_input(2)); }
  bool y2_saved() const { return (h || base) && (saves_input(4) || saves_input(5)); }
  bool w_saved() const { return v || (b.fp32() && scores); }
  bool grouped() const { return s.heads != s.kv_heads; }
  // Fused attention's logsumexp: fp32, one per query token and head.
  std::uint64_t logsumexp() const { return kF32 * b.n * b.heads; }
  // What fused attention saves that is one of the block's locals while it
  // runs (q, its output, and k and v unless repeated for grouped heads):
  // counted once in the forward's phases.
  std::uint64_t fused_shared_with_locals(bool grad_mode, bool attention_kept) const {
    return when(s.fused_attention && grad_mode && att && !attention_kept,
                (grouped() ? 2 : 4) * b.c * b.nq);
  }

  // What the attention weights keep: the mask and the softmax's saved weights.
  std::uint64_t kept_scores() const {
    return when(scores, b.mask) + (b.fp32()
                                       ? when(w_saved(), kF32 * b.scores)
                                       : when(scores, kF32 * b.scores) + when(v, b.c * b.scores));
  }

  // What the attention itself (q, k, v in, its output out) saves: the
  // products' copies of q, k (repeated or copied) and v, then the mask and
  // the softmax's weights; fused, q, k and v (repeated for grouped heads),
  // the output and the logsumexp, whichever input requires grad.
  std::uint64_t attention_core_graph() const {
    if (s.fused_attention) return when(att, 4 * b.c * b.nq + logsumexp());
    return when(k, b.c * b.nq) /* q copy */ + when(q, b.c * b.nq) /* k, repeated or copied */ +
           when(scores, b.c * b.nq) /* v copy */ + kept_scores();
  }
  // The graph's first half, freed last in backward: norm 1, q/k/v and the
  // attention weights (without those when selective recompute kept them).
  std::uint64_t attention_graph(bool attention_kept = false) const {
    return norm_graph(b, x, base) + when(y1_saved(), b.c * b.nh) + adapter_graph(0, y1) +
           adapter_graph(1, y1) + adapter_graph(2, y1) + head_norms_graph() + when(q, b.rope) +
           when(k, b.rope) /* gathered cos and sin, saved by the products */ +
           (attention_kept ? 0 : attention_core_graph());
  }
  // Per-head q and k norms (Qwen3, Gemma 3) on the projections' outputs.
  std::uint64_t head_norms_graph() const {
    if (!s.qk_norm) return 0;
    return norm_graph(b, b.nq, b.n * b.heads, q, base) +
           norm_graph(b, b.nkv, b.n * b.kv_heads, k, base);
  }
  // Sandwich norms (Gemma 3): after attention (on o_proj's output) and after
  // the MLP (on down_proj's), beside the MLP's own input norm.
  std::uint64_t sandwich_graph() const {
    if (!s.sandwich_norms) return 0;
    return norm_graph(b, h || base, base) + norm_graph(b, prod || base || adapted(6), base);
  }

  // Selective recompute's kept attention (fsdp::KeptSegments): the graph of
  // the attention on leaves standing for q, k and v (each requiring grad),
  // those leaves (the forward's q, k, v) and the attention's output.
  std::uint64_t kept_attention() const {
    if (s.fused_attention)  // the leaves, the repeated k and v, the output, the logsumexp
      return b.c * (b.nq + 2 * b.nkv) + when(grouped(), 2 * b.c * b.nq) + b.c * b.nq + logsumexp();
    const Block all_grads(s, true);
    return all_grads.attention_core_graph() + b.c * (b.nq + 2 * b.nkv) + b.c * b.nq;
  }
  // The second half, freed first: attention output (fused: in the
  // attention's graph, which holds it until its backward), norm 2 and the MLP.
  std::uint64_t mlp_graph() const {
    return when(saves_input(3) && att && !s.fused_attention, b.c * b.nq) + adapter_graph(3, att) +
           when(b.fp32() && h, b.c * b.nhs) + norm_graph(b, h, base) +
           when(y2_saved(), b.c * b.nh) + adapter_graph(4, h || base) +
           adapter_graph(5, h || base) + adapter_graph(6, prod) + when(gate, 2 * b.c * b.ni) +
           when(up, b.c * b.ni) + when(saves_input(6) && prod, b.c * b.ni) + sandwich_graph();
  }

  // The forward's highest point above its input. C++ locals live until the
  // block returns (norm 1's output, q, k, v, the attention output, h, norm
  // 2's output), so the later phases hold the earlier ones' results beside
  // what autograd keeps. `attention_kept`: selective recompute's recompute,
  // whose attention is the kept one (no scores computed).
  std::uint64_t forward_peak(bool grad_mode, bool attention_kept = false) const {
    const std::uint64_t norm1 = grad_mode ? norm_graph(b, x, base) : 0;
    const std::uint64_t adapters_qkv =
        grad_mode ? adapter_graph(0, y1) + adapter_graph(1, y1) + adapter_graph(2, y1) : 0;
    const std::uint64_t locals = b.c * (b.nh + b.nq + 2 * b.nkv);  // n1.y, q, k, v
    // q's projection and RoPE's three temporaries.
    const std::uint64_t rope = norm1 + b.c * b.nh + 5 * b.c * b.nq + 2 * b.rope;
    // Rows attended apart: the last row's work comes on top of what the
    // earlier rows' graphs keep, and the rows' outputs are cat'ed at the end.
    const std::uint64_t earlier_rows =
        grad_mode ? kept_scores() - kept_scores() * b.call_scores / b.scores : 0;
    const std::uint64_t call = b.call_scores;
    // matmul(q, k^T): the q copy, k's (and grouped v's) copies, scores and scaled scores.
    const std::uint64_t products = norm1 + adapters_qkv + locals + earlier_rows +
                                   b.c * b.nq * (grouped() ? 3 : 2) + 2 * b.c * call;
    const std::uint64_t before_softmax =
        norm1 + adapters_qkv + locals + earlier_rows + when(grad_mode && k, b.c * b.nq) +
        (grouped() ? 2 * b.c * b.nq : when(grad_mode && q, b.c * b.nq)) + b.call_mask;
    const std::uint64_t softmax =
        before_softmax + (b.fp32() ? std::max(2 * b.c * call + b.call_mask,
                                              2 * kF32 * call + b.c * b.nq * (grouped() ? 1 : 2))
                                   : (b.c + 2 * kF32) * call);
    const std::uint64_t cat = !b.apart ? 0
                                       : norm1 + adapters_qkv + locals + kept_scores() +
                                             (grouped() ? 2 * b.c * b.nq : 0) + 2 * b.c * b.nq;
    // The MLP's four intermediates with down_proj's output and the block's.
    const std::uint64_t attention_part =
        grad_mode ? attention_graph(attention_kept) - when(y1_saved(), b.c * b.nh) : 0;
    const std::uint64_t mlp_adapters =
        grad_mode ? adapter_graph(3, att) + adapter_graph(4, h || base) +
                        adapter_graph(5, h || base) + adapter_graph(6, prod)
                  : 0;
    const std::uint64_t norm2 = grad_mode ? norm_graph(b, h, base) : 0;
    const std::uint64_t through_mlp = attention_part + locals + b.c * b.nq /* att */ +
                                      b.c * b.nhs /* h */ + norm2 + mlp_adapters -
                                      fused_shared_with_locals(grad_mode, attention_kept);
    const std::uint64_t norm2_peak = through_mlp + norm_peak(b);
    // Under sequence parallelism n2.y is gathered whole and down_proj's
    // whole output reduce-scattered into the block's part.
    const std::uint64_t mlp = through_mlp + b.c * b.nhs /* n2.y */ + when(split, b.c * b.nh) +
                              4 * b.c * b.ni + b.c * b.nh + b.c * b.nhs;
    if (attention_kept) return std::max({norm_peak(b), rope, norm2_peak, mlp});
    if (s.fused_attention) {  // no scores: k and v repeated for grouped heads, the output
      const std::uint64_t fused = norm1 + adapters_qkv + locals + when(grouped(), 2 * b.c * b.nq) +
                                  b.c * b.nq + logsumexp();
      return std::max({norm_peak(b), rope, fused, norm2_peak, mlp});
    }
    return std::max({norm_peak(b), rope, products, softmax, cat, norm2_peak, mlp});
  }

  // down_proj's backward with the product still held, then the two gradients
  // of silu(gate) * up; under sequence parallelism beside down_proj's output
  // gradient, gathered whole from the block's part.
  std::uint64_t mlp_backward_peak() const {
    const std::uint64_t g_prod = when(prod, b.c * b.ni);
    const std::uint64_t prod_kept = when(saves_input(6) && prod, b.c * b.ni);
    return weight_grads(6) + when(split, b.c * b.nh) +
           std::max(g_prod, g_prod - prod_kept + when(gate, b.c * b.ni) + when(up, b.c * b.ni));
  }
  // The softmax backward: the value gradient, the weights' gradient (fp32 in
  // bf16 runs) and the scores' gradient, while the v copy and (bf16) the
  // compute-dtype weights are already gone.
  std::uint64_t attention_backward_peak() const {
    // Then the per-head q and k norms' backward (Qwen3, Gemma 3): q's and k's
    // gradients with the norm's fp32 temporaries over q.
    const std::uint64_t head_norms =
        !s.qk_norm ? 0 : b.c * (b.nq + b.nkv) + (b.fp32() ? 2 : 3) * kF32 * b.nq;
    // Fused: q's, k's and v's gradients (repeated), flash's fp32 query
    // gradient and softmax sums, then repeat_kv's sums into k's and v's.
    if (s.fused_attention)
      return std::max(
          when(att, 3 * b.c * b.nq + kF32 * b.nq + logsumexp() + when(grouped(), 2 * b.c * b.nkv)),
          head_norms);
    const bool weights_grad = q || k;
    const std::uint64_t call = b.call_scores;
    const std::uint64_t grads = when(v, b.c * b.nq) + when(weights_grad, 2 * kF32 * call);
    const std::uint64_t released =
        when(scores, b.c * b.nq) + when(!b.fp32() && weights_grad && w_saved(), b.c * call);
    return std::max(grads > released ? grads - released : 0, head_norms);
  }
  std::uint64_t mlp_weight_grads() const {
    return weight_grads(3) + weight_grads(4) + weight_grads(5) + weight_grads(6) +
           norm_weight_grads() / 2;
  }
  std::uint64_t attention_weight_grads() const {
    return weight_grads(0) + weight_grads(1) + weight_grads(2) + norm_weight_grads() / 2;
  }
};

}  // namespace

bool UnitShapes::adapted(const std::string& projection) const {
  return lora &&
         std::find(lora_targets.begin(), lora_targets.end(), projection) != lora_targets.end();
}

void block_forward(MemoryTimeline& t, const UnitShapes& s, const UnitCall& call,
                   const std::string& output) {
  const Block block(s, call.input_requires_grad);
  const bool recording = call.keeps_attention && !call.grad_mode;
  const bool replaying = call.keeps_attention && call.grad_mode;
  // Recording, the attention's graph builds up beside the checkpointed
  // forward's working set (an upper bound: all of it in every phase).
  t.transient(
      block.forward_peak(call.grad_mode, replaying) + (recording ? block.kept_attention() : 0),
      Part::kUnitWorkingSet);
  if (recording)
    t.allocate(name(call, "kept_attention"), block.kept_attention(), Part::kBoundaryActivations);
  if (call.grad_mode) {
    t.allocate(name(call, "attention_graph"), block.attention_graph(replaying),
               Part::kUnitWorkingSet);
    t.allocate(name(call, "mlp_graph"), block.mlp_graph(), Part::kUnitWorkingSet);
  }
  t.allocate(output, block.b.c * block.b.nhs,
             call.grad_mode ? Part::kUnitWorkingSet : Part::kBoundaryActivations);
}

std::string block_backward(MemoryTimeline& t, const UnitShapes& s, const UnitCall& call) {
  const Block block(s, call.input_requires_grad);
  const Bytes& b = block.b;
  t.transient(block.mlp_backward_peak(), Part::kUnitWorkingSet);
  t.free(name(call, "mlp_graph"));
  t.allocate(name(call, "pg.mlp"), block.mlp_weight_grads(), Part::kUnitGradientBuffers);
  // h's gradient (the residual's and norm 2's summed) waits for norm 1's.
  if (block.x) t.allocate(name(call, "gh"), b.c * b.nhs, Part::kUnitWorkingSet);
  t.transient(block.attention_backward_peak(), Part::kUnitWorkingSet);
  t.allocate(name(call, "pg.attention"), block.attention_weight_grads(),
             Part::kUnitGradientBuffers);
  t.free(name(call, "attention_graph"));
  if (call.keeps_attention) t.free(name(call, "kept_attention"));
  return block.x ? name(call, "gh") : std::string();
}

}  // namespace nss::preflight
