#include "preflight/unit_activations.h"

#include <algorithm>

namespace nss::preflight {
namespace {

using Part = MemoryPart;
constexpr std::uint64_t kF32 = 4;

std::uint64_t u64(std::int64_t v) {
  return static_cast<std::uint64_t>(v);
}

std::uint64_t when(bool condition, std::uint64_t bytes) {
  return condition ? bytes : 0;
}

// Rows attended apart spend sum(span^2) per row on scores and masks, one
// attention call per span; otherwise one call covers the batch, seq^2 a row.
std::uint64_t row_area(const UnitShapes& s) {
  if (s.row_spans.empty()) return u64(s.seq * s.seq);
  std::uint64_t area = 0;
  for (const std::int64_t span : s.row_spans) area += u64(span * span);
  return area;
}

std::uint64_t largest_span_area(const UnitShapes& s) {
  std::int64_t largest = s.row_spans.empty() ? s.seq : 0;
  for (const std::int64_t span : s.row_spans) largest = std::max(largest, span);
  return u64(largest * largest);
}

// Bytes of one micro-batch's tensors: `c` per element of the compute dtype,
// `n` tokens; nh, nq, nkv, ni are n x hidden, heads x head_dim,
// kv_heads x head_dim, intermediate; `scores` every attention score of the
// micro-batch (B x heads x the row's area); `mask` the hidden keys (bool
// S x S, or per row for packed rows); `call_*` what one attention call holds
// (all of it, or one span of one row when rows are attended apart); `rope`
// the cos/sin rows packed rows gather per q or k (B x S x head_dim each).
struct Bytes {
  std::uint64_t c, n, nh, nq, nkv, ni, scores, mask, call_scores, call_mask, rope;
  bool apart;
  explicit Bytes(const UnitShapes& s)
      : c(u64(s.compute_bytes)),
        n(u64(s.tokens())),
        nh(n * u64(s.hidden)),
        nq(n * u64(s.heads * s.head_dim)),
        nkv(n * u64(s.kv_heads * s.head_dim)),
        ni(n * u64(s.intermediate)),
        scores(u64(s.batch * s.heads) * row_area(s)),
        mask(s.packed ? u64(s.batch) * row_area(s) : u64(s.seq * s.seq)),
        call_scores(s.rows_apart ? u64(s.heads) * largest_span_area(s) : scores),
        call_mask(s.rows_apart ? largest_span_area(s) : mask),
        rope(s.packed ? 2 * n * u64(s.head_dim) * c : 0),
        apart(s.rows_apart) {}
  bool fp32() const { return c == kF32; }
};

// RMSNorm in fp32 (llama_functional rms_norm): x.to(f32) (bf16 runs), x^2
// and rsqrt kept for the input's gradient, the normalised value (in the
// compute dtype) kept for the weight's; `y` itself is counted by the caller.
std::uint64_t norm_graph(const Bytes& b, bool input_grad, bool weight_grad) {
  return when(input_grad, (b.fp32() ? 0 : kF32 * b.nh) + kF32 * b.nh + kF32 * b.n) +
         when(weight_grad, b.c * b.nh);
}

// The norm's own peak: fp32 x^2, rsqrt, normalised (and its bf16 copies).
std::uint64_t norm_peak(const Bytes& b) {
  return b.fp32() ? 3 * kF32 * b.nh + kF32 * b.n : 3 * kF32 * b.nh + 2 * b.c * b.nh + kF32 * b.n;
}

// The norm's backward above its kept tensors and incoming gradient: the
// fp32 gradient, x^2's gradient and pow's backward temporaries.
std::uint64_t norm_backward_peak(const Bytes& b) {
  return (b.fp32() ? 2 : 3) * kF32 * b.nh;
}

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

  // What the attention weights keep: the mask and the softmax's saved weights.
  std::uint64_t kept_scores() const {
    return when(scores, b.mask) + (b.fp32()
                                       ? when(w_saved(), kF32 * b.scores)
                                       : when(scores, kF32 * b.scores) + when(v, b.c * b.scores));
  }

  // What the attention itself (q, k, v in, its output out) saves: the
  // products' copies of q, k (repeated or copied) and v, the mask and the
  // softmax's weights.
  std::uint64_t attention_core_graph() const {
    return when(k, b.c * b.nq) /* q copy */ + when(q, b.c * b.nq) /* k, repeated or copied */ +
           when(scores, b.c * b.nq + b.mask) /* v copy, causal mask */ +
           (b.fp32() ? when(w_saved(), kF32 * b.scores)
                     : when(scores, kF32 * b.scores) + when(v, b.c * b.scores));
  }
  // The graph's first half, freed last in backward: norm 1, q/k/v and the
  // attention weights (without those when selective recompute kept them).
  std::uint64_t attention_graph(bool attention_kept = false) const {
    return norm_graph(b, x, base) + when(y1_saved(), b.c * b.nh) + adapter_graph(0, y1) +
           adapter_graph(1, y1) + adapter_graph(2, y1) + when(q, b.rope) +
           when(k, b.rope) /* gathered cos and sin, saved by the products */ +
           (attention_kept ? 0 : attention_core_graph());
  }
  // Selective recompute's kept attention (fsdp::KeptSegments): the graph of
  // the attention on leaves standing for q, k and v (each requiring grad),
  // those leaves (the forward's q, k, v) and the attention's output.
  std::uint64_t kept_attention() const {
    const Block all_grads(s, true);
    return all_grads.attention_core_graph() + b.c * (b.nq + 2 * b.nkv) + b.c * b.nq;
  }
  // The second half, freed first: attention output, norm 2 and the MLP.
  std::uint64_t mlp_graph() const {
    return when(saves_input(3) && att, b.c * b.nq) + adapter_graph(3, att) +
           when(b.fp32() && h, b.c * b.nh) + norm_graph(b, h, base) + when(y2_saved(), b.c * b.nh) +
           adapter_graph(4, h || base) + adapter_graph(5, h || base) + adapter_graph(6, prod) +
           when(gate, 2 * b.c * b.ni) + when(up, b.c * b.ni) +
           when(saves_input(6) && prod, b.c * b.ni);
  }

  // The forward's highest point above its input. C++ locals live until the
  // block returns (norm 1's output, q, k, v, the attention output, h, norm
  // 2's output), so the later phases hold the earlier ones' results beside
  // what autograd keeps. `attention_kept`: selective recompute's recompute,
  // whose attention is the kept one (no scores computed).
  std::uint64_t forward_peak(bool grad_mode, bool attention_kept = false) const {
    const bool grouped = s.heads != s.kv_heads;
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
                                   b.c * b.nq * (grouped ? 3 : 2) + 2 * b.c * call;
    const std::uint64_t before_softmax =
        norm1 + adapters_qkv + locals + earlier_rows + when(grad_mode && k, b.c * b.nq) +
        (grouped ? 2 * b.c * b.nq : when(grad_mode && q, b.c * b.nq)) + b.call_mask;
    const std::uint64_t softmax =
        before_softmax + (b.fp32() ? std::max(2 * b.c * call + b.call_mask,
                                              2 * kF32 * call + b.c * b.nq * (grouped ? 1 : 2))
                                   : (b.c + 2 * kF32) * call);
    const std::uint64_t cat = !b.apart ? 0
                                       : norm1 + adapters_qkv + locals + kept_scores() +
                                             (grouped ? 2 * b.c * b.nq : 0) + 2 * b.c * b.nq;
    // The MLP's four intermediates with down_proj's output and the block's.
    const std::uint64_t attention_part =
        grad_mode ? attention_graph(attention_kept) - when(y1_saved(), b.c * b.nh) : 0;
    const std::uint64_t mlp_adapters =
        grad_mode ? adapter_graph(3, att) + adapter_graph(4, h || base) +
                        adapter_graph(5, h || base) + adapter_graph(6, prod)
                  : 0;
    const std::uint64_t norm2 = grad_mode ? norm_graph(b, h, base) : 0;
    const std::uint64_t through_mlp =
        attention_part + locals + b.c * b.nq /* att */ + b.c * b.nh /* h */ + norm2 + mlp_adapters;
    const std::uint64_t norm2_peak = through_mlp + norm_peak(b);
    const std::uint64_t mlp = through_mlp + b.c * b.nh /* n2.y */ + 4 * b.c * b.ni + 2 * b.c * b.nh;
    if (attention_kept) return std::max({norm_peak(b), rope, norm2_peak, mlp});
    return std::max({norm_peak(b), rope, products, softmax, cat, norm2_peak, mlp});
  }

  // down_proj's backward with the product still held, then the two gradients
  // of silu(gate) * up.
  std::uint64_t mlp_backward_peak() const {
    const std::uint64_t g_prod = when(prod, b.c * b.ni);
    const std::uint64_t prod_kept = when(saves_input(6) && prod, b.c * b.ni);
    return weight_grads(6) +
           std::max(g_prod, g_prod - prod_kept + when(gate, b.c * b.ni) + when(up, b.c * b.ni));
  }
  // The softmax backward: the value gradient, the weights' gradient (fp32 in
  // bf16 runs) and the scores' gradient, while the v copy and (bf16) the
  // compute-dtype weights are already gone.
  std::uint64_t attention_backward_peak() const {
    const bool weights_grad = q || k;
    const std::uint64_t call = b.call_scores;
    const std::uint64_t grads = when(v, b.c * b.nq) + when(weights_grad, 2 * kF32 * call);
    const std::uint64_t released =
        when(scores, b.c * b.nq) + when(!b.fp32() && weights_grad && w_saved(), b.c * call);
    return grads > released ? grads - released : 0;
  }
  std::uint64_t mlp_weight_grads() const {
    return weight_grads(3) + weight_grads(4) + weight_grads(5) + weight_grads(6) +
           norm_weight_grads() / 2;
  }
  std::uint64_t attention_weight_grads() const {
    return weight_grads(0) + weight_grads(1) + weight_grads(2) + norm_weight_grads() / 2;
  }
};

std::string name(const UnitCall& call, const char* local) {
  return call.prefix + local;
}

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
  t.allocate(output, block.b.c * block.b.nh,
             call.grad_mode ? Part::kUnitWorkingSet : Part::kBoundaryActivations);
}

std::string block_backward(MemoryTimeline& t, const UnitShapes& s, const UnitCall& call) {
  const Block block(s, call.input_requires_grad);
  const Bytes& b = block.b;
  t.transient(block.mlp_backward_peak(), Part::kUnitWorkingSet);
  t.free(name(call, "mlp_graph"));
  t.allocate(name(call, "pg.mlp"), block.mlp_weight_grads(), Part::kUnitGradientBuffers);
  // h's gradient (the residual's and norm 2's summed) waits for norm 1's.
  if (block.x) t.allocate(name(call, "gh"), b.c * b.nh, Part::kUnitWorkingSet);
  t.transient(block.attention_backward_peak(), Part::kUnitWorkingSet);
  t.allocate(name(call, "pg.attention"), block.attention_weight_grads(),
             Part::kUnitGradientBuffers);
  t.free(name(call, "attention_graph"));
  if (call.keeps_attention) t.free(name(call, "kept_attention"));
  return block.x ? name(call, "gh") : std::string();
}

// The chunked head (model/chunked_head.h). Forward: the norm, then, when a
// graph is built, the gradients it computes on the spot, fp32 and unsharded
// — the head weight's [V, H] (when the base trains) and the normed hidden
// state's [T, H] — then one chunk of logits at a time: the chunk's float32
// logits, which become its gradient in place, and in bf16 runs the logits in
// the compute dtype before them, the gradient's copy in it after, and the
// head weight gradient's [V, H] product in it.
void chunked_head_forward(MemoryTimeline& t, const UnitShapes& s, const UnitCall& call) {
  const Bytes b(s);
  const bool base = !s.lora, x = call.input_requires_grad;
  const std::uint64_t cv = u64(std::min(s.loss_chunk_tokens, s.tokens()) * s.vocab);
  const std::uint64_t norm = call.grad_mode ? norm_graph(b, x, base) : 0;
  const bool grads = call.grad_mode && (x || base);
  const std::uint64_t chunk =
      b.fp32() ? kF32 * cv
               : kF32 * cv + b.c * cv + when(grads && base, u64(s.vocab * s.hidden) * b.c);
  t.transient(norm_peak(b), Part::kHeadLogits);
  if (grads)
    t.allocate(name(call, "head_grads"), when(base, kF32 * u64(s.vocab * s.hidden)) + kF32 * b.nh,
               Part::kHeadLogits);
  t.transient(norm + b.c * b.nh + chunk, Part::kHeadLogits);
  if (call.grad_mode) t.allocate(name(call, "graph"), norm, Part::kUnitWorkingSet);
}

// Backward of the chunked head: the kept gradients scaled in place (and
// cast to the compute dtype in bf16 runs) are the parameters' and the
// normed hidden state's gradients; the norm's backward follows.
std::string chunked_head_backward(MemoryTimeline& t, const UnitShapes& s, const UnitCall& call,
                                  bool tied) {
  const Bytes b(s);
  const bool base = !s.lora, x = call.input_requires_grad;
  const std::uint64_t head_weight = u64(s.vocab * s.hidden) * b.c;
  if (!b.fp32()) t.transient(when(base, head_weight) + b.c * b.nh, Part::kHeadLogits);
  if (x || base) t.free(name(call, "head_grads"));
  if (base && tied) t.allocate(name(call, "tg.embedding"), head_weight, Part::kUnitGradientBuffers);
  if (base && !tied) t.allocate(name(call, "pg.lm_head"), head_weight, Part::kUnitGradientBuffers);
  if (base) t.allocate(name(call, "pg.norm"), u64(s.hidden) * b.c, Part::kUnitGradientBuffers);
  if (x) t.transient(b.c * b.nh + norm_backward_peak(b), Part::kUnitWorkingSet);
  t.free(name(call, "graph"));
  if (!x) return std::string();
  t.allocate(name(call, "gx"), b.c * b.nh, Part::kUnitWorkingSet);
  return name(call, "gx");
}

void head_forward(MemoryTimeline& t, const UnitShapes& s, const UnitCall& call) {
  if (s.loss_chunk_tokens > 0) return chunked_head_forward(t, s, call);
  const Bytes b(s);
  const bool base = !s.lora, x = call.input_requires_grad;
  const std::uint64_t nv = b.n * u64(s.vocab);
  // Norm, logits (and their fp32 copy in bf16 runs), log-softmax.
  const std::uint64_t norm = call.grad_mode ? norm_graph(b, x, base) : 0;
  t.transient(
      std::max(norm_peak(b), norm + b.c * b.nh + b.c * nv + when(!b.fp32(), kF32 * nv) + kF32 * nv),
      Part::kHeadLogits);
  if (!call.grad_mode) return;
  t.allocate(name(call, "graph"), norm + when(base, b.c * b.nh), Part::kUnitWorkingSet);
  t.allocate(name(call, "logsm"), when(x || base, kF32 * nv), Part::kHeadLogits);
}

std::string head_backward(MemoryTimeline& t, const UnitShapes& s, const UnitCall& call, bool tied) {
  if (s.loss_chunk_tokens > 0) return chunked_head_backward(t, s, call, tied);
  const Bytes b(s);
  const bool base = !s.lora, x = call.input_requires_grad;
  const std::uint64_t nv = b.n * u64(s.vocab);
  // The loss's gradient and log-softmax's, beside the kept log-softmax.
  t.transient(2 * kF32 * nv, Part::kHeadLogits);
  t.free(name(call, "logsm"));
  // The logits' gradient (fp32, and its compute-dtype copy in bf16 runs)
  // beside the head weight's gradient and the hidden state's.
  const std::uint64_t head_weight = u64(s.vocab * s.hidden) * b.c;
  const std::uint64_t g_logits = b.fp32() ? kF32 * nv : b.c * nv;
  t.transient(std::max(when(!b.fp32(), (kF32 + b.c) * nv),
                       g_logits + when(base, head_weight) + when(x, b.c * b.nh)),
              Part::kHeadLogits);
  if (base && tied) t.allocate(name(call, "tg.embedding"), head_weight, Part::kUnitGradientBuffers);
  if (base && !tied) t.allocate(name(call, "pg.lm_head"), head_weight, Part::kUnitGradientBuffers);
  if (base) t.allocate(name(call, "pg.norm"), u64(s.hidden) * b.c, Part::kUnitGradientBuffers);
  // The final norm's backward: its output (kept for the head weight) is gone,
  // the hidden state's gradient has come.
  if (x) t.transient(when(!base, b.c * b.nh) + norm_backward_peak(b), Part::kUnitWorkingSet);
  t.free(name(call, "graph"));
  if (!x) return std::string();
  t.allocate(name(call, "gx"), b.c * b.nh, Part::kUnitWorkingSet);
  return name(call, "gx");
}

void embedding_forward(MemoryTimeline& t, const UnitShapes& s, const UnitCall& call,
                       const std::string& output) {
  t.allocate(output, u64(s.tokens() * s.hidden * s.compute_bytes),
             call.grad_mode ? Part::kUnitWorkingSet : Part::kBoundaryActivations);
}

void embedding_backward(MemoryTimeline& t, const UnitShapes& s, const UnitCall& call) {
  t.allocate(name(call, "pg.embedding"), u64(s.vocab * s.hidden * s.compute_bytes),
             Part::kUnitGradientBuffers);
}

}  // namespace nss::preflight
