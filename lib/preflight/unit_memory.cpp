#include "preflight/unit_memory.h"

#include <algorithm>

namespace nss::preflight {
namespace {

using Part = MemoryPart;
constexpr std::uint64_t kF32 = 4;
constexpr Part kWork = Part::kUnitWorkingSet;

std::uint64_t u64(std::int64_t v) {
  return static_cast<std::uint64_t>(v);
}

// A gradient on its way through the engine: linear layers hand out views of
// their matmul results, which the engine never accumulates into in place.
struct Grad {
  std::string name;  // empty: no gradient
  bool view = false;
  explicit operator bool() const { return !name.empty(); }
};

// The autograd engine's InputBuffer::accumulate: in place into a gradient that
// is not a view, else into a new tensor.
Grad accumulate(MemoryTimeline& t, const Grad& first, const Grad& second, std::uint64_t bytes,
                const std::string& sum_name) {
  if (!first) return second;
  if (!second) return first;
  if (!first.view) {
    t.free(second.name);
    return first;
  }
  if (!second.view) {
    t.free(first.name);
    return second;
  }
  t.allocate(sum_name, bytes, kWork);
  t.free(first.name);
  t.free(second.name);
  return {sum_name, false};
}

// Names and byte sizes of one unit call.
class Script {
 public:
  Script(MemoryTimeline& t, const UnitShapes& s, const UnitCall& call)
      : t(t), s(s), call(call), c(u64(s.compute_bytes)), n(u64(s.tokens())) {}

  std::string name(const std::string& local) const { return call.prefix + local; }
  void alloc(const std::string& local, std::uint64_t bytes, Part part = kWork) {
    t.allocate(name(local), bytes, part);
  }
  void free(const std::string& local) { t.free(name(local)); }
  void free_if_live(const std::string& local) { t.free_if_live(name(local)); }
  bool live(const std::string& local) const { return t.live(name(local)); }
  // A tensor whose last reference is a local or a temporary: kept only when
  // autograd saved it.
  void die_unless(const std::string& local, bool saved) {
    if (!(call.grad_mode && saved)) free_if_live(local);
  }
  void param_grad(const std::string& local, std::uint64_t bytes) {
    alloc("pg." + local, bytes, Part::kUnitGradientBuffers);
  }

  MemoryTimeline& t;
  const UnitShapes& s;
  const UnitCall& call;
  const std::uint64_t c, n;
};

// --- RMSNorm (llama_functional rms_norm) -----------------------------------

// Normalised in fp32: x.to(f32), pow(2) (kept by mean), rsqrt (kept),
// x32 * rsqrt, back to the compute dtype, times the weight.
void rms_forward(Script& k, const std::string& tag, bool x_rg, bool w_rg) {
  const bool graph = k.call.grad_mode && x_rg;
  const std::uint64_t h = k.n * u64(k.s.hidden);
  if (k.c != kF32) k.alloc(tag + "x32", h * kF32);
  k.alloc(tag + "pow", h * kF32);
  k.alloc(tag + "r", k.n * kF32);
  k.alloc(tag + "xn", h * kF32);
  std::string scaled = tag + "xn";
  if (k.c != kF32) {
    k.alloc(tag + "xnc", h * k.c);
    k.free(tag + "xn");
    scaled = tag + "xnc";
  }
  k.alloc(tag + "y", h * k.c);
  k.die_unless(scaled, w_rg);
  k.die_unless(tag + "pow", graph);
  k.die_unless(tag + "r", graph);
  if (k.c != kF32) k.die_unless(tag + "x32", graph);
}

// Returns the gradient with respect to the norm's input (not a view).
Grad rms_backward(Script& k, const std::string& tag, const std::string& grad_y, bool x_rg,
                  bool w_rg) {
  const std::uint64_t h = k.n * u64(k.s.hidden);
  if (x_rg) k.alloc(tag + "gxn", h * k.c);
  if (w_rg) {
    k.t.transient(h * k.c, kWork);  // grad * normalised, before the sum over tokens
    k.param_grad(tag + "w", u64(k.s.hidden) * k.c);
  }
  k.t.free(grad_y);
  k.free_if_live(tag + (k.c != kF32 ? "xnc" : "xn"));
  if (!x_rg) return {};
  std::string gxn = tag + "gxn";
  if (k.c != kF32) {
    k.alloc(tag + "gxn32", h * kF32);
    k.free(gxn);
    gxn = tag + "gxn32";
  }
  k.alloc(tag + "gx", h * kF32);
  k.t.transient(h * kF32, kWork);
  k.free(gxn);
  k.free(tag + "r");
  k.t.transient(h * kF32, kWork);
  k.alloc(tag + "gmean", h * kF32);
  k.free(tag + "pow");
  k.t.transient(3 * h * kF32, kWork);  // pow's backward: grad * 2 * x
  k.free(tag + "gmean");               // its result is added to gx in place
  if (k.c != kF32) {
    k.alloc(tag + "gxc", h * k.c);
    k.free(tag + "gx");
    k.free(tag + "x32");
    return {k.name(tag + "gxc"), false};
  }
  return {k.name(tag + "gx"), false};
}

// --- projections with optional LoRA adapters (BlockProjections) -------------

struct Projection {
  std::string id;  // "q_proj", ...
  std::int64_t in, out;
  bool adapted;
};

// The input stays saved by the base linear (trainable weight) or by lora_A
// (no dropout: lora_A reads the input itself).
bool saves_input(const Script& k, const Projection& p) {
  return !k.s.lora || (p.adapted && !k.s.lora_dropout);
}

// Allocates the projection's output under `out`; returns whether it requires grad.
bool projection_forward(Script& k, const Projection& p, const std::string& input, bool in_rg,
                        const std::string& out) {
  const std::uint64_t in = k.n * u64(p.in), o = k.n * u64(p.out);
  const std::string tag = p.id + ".";
  k.alloc(p.adapted ? tag + "base" : out, o * k.c);
  if (!p.adapted) return in_rg || !k.s.lora;
  if (k.s.lora_dropout) {
    k.t.transient(in * (1 + k.c), kWork);  // uint8 mask and its conversion
    k.alloc(tag + "mult", in * k.c);
    k.alloc(tag + "drop", in * k.c);
    k.die_unless(tag + "mult", in_rg);
  }
  k.alloc(tag + "a", k.n * u64(k.s.lora_rank) * k.c);
  k.alloc(tag + "b", o * k.c);
  k.alloc(tag + "scaled", o * k.c);
  k.free(tag + "b");
  k.alloc(out, o * k.c);
  k.free(tag + "scaled");
  k.free(tag + "base");
  k.die_unless(tag + "a", true);
  if (k.s.lora_dropout) k.die_unless(tag + "drop", true);
  (void)input;
  return true;
}

// Gradient with respect to the projection's input; `grad` is freed when `owned`.
Grad projection_backward(Script& k, const Projection& p, const std::string& grad, bool owned,
                         bool in_rg) {
  const std::uint64_t in = k.n * u64(p.in), o = k.n * u64(p.out);
  const std::uint64_t r = u64(k.s.lora_rank);
  const std::string tag = p.id + ".";
  Grad lora;
  if (p.adapted) {
    k.alloc(tag + "gb", o * k.c);
    k.param_grad(tag + "B", r * u64(p.out) * k.c);
    k.alloc(tag + "ga", k.n * r * k.c);
    k.free(tag + "gb");
    k.free(tag + "a");
    k.param_grad(tag + "A", u64(p.in) * r * k.c);
    if (in_rg) k.alloc(tag + "gin", in * k.c);
    k.free(tag + "ga");
    if (k.s.lora_dropout) {
      k.free(tag + "drop");
      if (in_rg) {
        k.alloc(tag + "gdrop", in * k.c);
        k.free(tag + "gin");
        k.free(tag + "mult");
        lora = {k.name(tag + "gdrop"), false};
      }
    } else if (in_rg) {
      lora = {k.name(tag + "gin"), true};
    }
  }
  Grad base;
  if (!k.s.lora) k.param_grad(tag + "W", u64(p.in) * u64(p.out) * k.c);
  if (in_rg) {
    k.alloc(tag + "gx", in * k.c);
    base = {k.name(tag + "gx"), true};
  }
  if (owned) k.t.free(grad);
  return accumulate(k.t, lora, base, in * k.c, k.name(tag + "gsum"));
}

std::vector<Projection> block_projections(const UnitShapes& s) {
  const std::int64_t q = s.heads * s.head_dim, kv = s.kv_heads * s.head_dim;
  const std::int64_t h = s.hidden, i = s.intermediate;
  return {{"q_proj", h, q, s.adapted("q_proj")},       {"k_proj", h, kv, s.adapted("k_proj")},
          {"v_proj", h, kv, s.adapted("v_proj")},      {"o_proj", q, h, s.adapted("o_proj")},
          {"gate_proj", h, i, s.adapted("gate_proj")}, {"up_proj", h, i, s.adapted("up_proj")},
          {"down_proj", i, h, s.adapted("down_proj")}};
}

// What the block graph needs to remember between forward and backward.
struct BlockFlags {
  bool x_rg, y1_rg, q_rg, k_rg, v_rg, att_rg, h_rg, up_rg, gate_rg, prod_rg;
};

BlockFlags block_flags(const UnitShapes& s, bool x_rg) {
  const auto p = block_projections(s);
  BlockFlags f{};
  const bool base = !s.lora;
  f.x_rg = x_rg;
  f.y1_rg = x_rg || base;
  f.q_rg = f.y1_rg || p[0].adapted;
  f.k_rg = f.y1_rg || p[1].adapted;
  f.v_rg = f.y1_rg || p[2].adapted;
  const bool scores_rg = f.q_rg || f.k_rg;
  f.att_rg = scores_rg || f.v_rg;
  f.h_rg = x_rg || f.att_rg || p[3].adapted;
  const bool y2_rg = f.h_rg || base;
  f.up_rg = y2_rg || p[5].adapted;
  f.gate_rg = y2_rg || p[4].adapted;
  f.prod_rg = f.up_rg || f.gate_rg;
  return f;
}

// Element counts of a block's tensors for n = batch x seq tokens.
struct BlockSizes {
  bool base;     // no LoRA: the base weights train
  bool grouped;  // fewer key/value heads than query heads
  std::uint64_t nq, nkv, nh, ni, scores;
};

BlockSizes block_sizes(const UnitShapes& s, std::uint64_t n) {
  return {!s.lora,
          s.heads != s.kv_heads,
          n * u64(s.heads * s.head_dim),
          n * u64(s.kv_heads * s.head_dim),
          n * u64(s.hidden),
          n * u64(s.intermediate),
          u64(s.batch * s.heads * s.seq * s.seq)};
}

}  // namespace

bool UnitShapes::adapted(const std::string& projection) const {
  return lora &&
         std::find(lora_targets.begin(), lora_targets.end(), projection) != lora_targets.end();
}

// --- decoder block ---------------------------------------------------------

void block_forward(MemoryTimeline& t, const UnitShapes& s, const UnitCall& call,
                   const std::string& output) {
  Script k(t, s, call);
  const auto p = block_projections(s);
  const BlockFlags f = block_flags(s, call.input_requires_grad);
  const auto [base, grouped, nq, nkv, nh, ni, scores] = block_sizes(s, k.n);

  rms_forward(k, "n1.", f.x_rg, base);
  // q, k: projection, then RoPE (x*cos + rotate_half(x)*sin: three temporaries).
  projection_forward(k, p[0], "n1.y", f.y1_rg, "qlin");
  k.alloc("q", nq * k.c);
  t.transient(3 * nq * k.c, kWork);
  k.free("qlin");
  projection_forward(k, p[1], "n1.y", f.y1_rg, "klin");
  k.alloc("k", nkv * k.c);
  t.transient(3 * nkv * k.c, kWork);
  k.free("klin");
  projection_forward(k, p[2], "n1.y", f.y1_rg, "v");
  if (grouped) {  // repeat_kv copies
    k.alloc("krep", nq * k.c);
    k.alloc("vrep", nq * k.c);
  }
  // scores = matmul(q, k^T): q (RoPE keeps the transposed layout) and, without
  // grouping, k are copied to batched layout; bmm saves each operand when the
  // other requires grad.
  k.alloc("qc", nq * k.c);
  if (!grouped) k.alloc("krep", nq * k.c);
  k.alloc("s1", scores * k.c);
  k.alloc("s2", scores * k.c);
  k.free("s1");
  k.die_unless("qc", f.k_rg);
  if (!grouped) k.die_unless("krep", f.q_rg);
  const bool scores_rg = f.q_rg || f.k_rg;
  k.alloc("mask", u64(s.seq * s.seq), kWork);
  t.transient(u64(s.seq * s.seq), kWork);
  k.alloc("s3", scores * k.c);
  k.free("s2");
  if (k.c != kF32) {  // softmax in fp32, weights back in the compute dtype
    k.alloc("s32", scores * kF32);
    k.alloc("w32", scores * kF32);
    k.free("s32");
    k.alloc("w", scores * k.c);
    k.die_unless("w32", scores_rg);
  } else {
    k.alloc("w", scores * k.c);
  }
  if (!grouped) k.alloc("vrep", nq * k.c);  // v copied to batched layout
  k.alloc("av", nq * k.c);
  k.free("s3");
  k.die_unless("mask", scores_rg);
  k.die_unless("w", f.v_rg || (k.c == kF32 && scores_rg));
  if (!grouped) k.die_unless("vrep", scores_rg);
  k.alloc("att", nq * k.c);  // transpose + reshape copy
  k.free("av");
  if (grouped) {
    k.die_unless("krep", f.q_rg);
    k.die_unless("vrep", scores_rg);
  }
  projection_forward(k, p[3], "att", f.att_rg, "o");
  k.alloc("h", nh * k.c);
  k.free("o");
  rms_forward(k, "n2.", f.h_rg, base);
  // MLP: up, gate (the operands of * are evaluated right to left), silu, product.
  projection_forward(k, p[5], "n2.y", f.h_rg || base, "up");
  projection_forward(k, p[4], "n2.y", f.h_rg || base, "gate");
  k.alloc("silu", ni * k.c);
  k.alloc("prod", ni * k.c);
  projection_forward(k, p[6], "prod", f.prod_rg, "down");
  t.allocate(output, nh * k.c, call.grad_mode ? kWork : Part::kBoundaryActivations);
  k.free("down");
  k.die_unless("gate", f.gate_rg);
  k.die_unless("silu", f.up_rg);
  k.die_unless("up", f.gate_rg);
  k.die_unless("prod", saves_input(k, p[6]) && f.prod_rg);
  // Locals of decoder_block_forward die; autograd keeps what it saved.
  k.free("q");
  k.free("k");
  k.free("v");
  const bool y1_saved =
      f.y1_rg && (saves_input(k, p[0]) || saves_input(k, p[1]) || saves_input(k, p[2]));
  k.die_unless("n1.y", y1_saved);
  k.die_unless("att", saves_input(k, p[3]) && f.att_rg);
  k.die_unless("n2.y", (f.h_rg || base) && (saves_input(k, p[4]) || saves_input(k, p[5])));
  // fp32: the norm's input is h itself, saved by pow; bf16: a converted copy is.
  k.die_unless("h", k.c == kF32 && f.h_rg);
}

std::string block_backward(MemoryTimeline& t, const UnitShapes& s, const UnitCall& call,
                           const std::string& grad_out) {
  Script k(t, s, call);
  const auto p = block_projections(s);
  const BlockFlags f = block_flags(s, call.input_requires_grad);
  const auto [base, grouped, nq, nkv, nh, ni, scores] = block_sizes(s, k.n);

  // out = h + down: the gradient passes through to both.
  const Grad g_prod = projection_backward(k, p[6], grad_out, false, f.prod_rg);
  k.free_if_live("prod");
  Grad g_y2a, g_y2b;
  if (g_prod) {
    if (f.gate_rg) k.alloc("gsilu", ni * k.c);
    if (f.up_rg) k.alloc("gup", ni * k.c);
    t.free(g_prod.name);
    k.free_if_live("silu");
    k.free_if_live("up");
    if (f.gate_rg) {
      k.alloc("ggate", ni * k.c);
      k.free("gsilu");
      k.free_if_live("gate");
      g_y2a = projection_backward(k, p[4], k.name("ggate"), true, f.h_rg || base);
    }
    if (f.up_rg) g_y2b = projection_backward(k, p[5], k.name("gup"), true, f.h_rg || base);
  }
  k.free_if_live("n2.y");
  const Grad g_y2 = accumulate(t, g_y2a, g_y2b, nh * k.c, k.name("gy2"));
  // h's gradient: the residual's pass-through (grad_out, shared) plus the
  // norm's, summed into a new tensor.
  Grad g_h;
  if (g_y2) {
    const Grad g_norm = rms_backward(k, "n2.", g_y2.name, f.h_rg, base);
    if (g_norm) {
      k.alloc("gh", nh * k.c);
      t.free(g_norm.name);
      g_h = {k.name("gh"), false};
    }
  }
  k.free_if_live("h");
  const bool o_needed = f.att_rg || p[3].adapted || base;
  Grad g_att;
  if (o_needed) {
    g_att = projection_backward(k, p[3], g_h ? g_h.name : grad_out, false, f.att_rg);
    k.free_if_live("att");
  }
  if (!f.x_rg && g_h) t.free(g_h.name);
  if (g_att) {
    k.alloc("gav", nq * k.c);  // the reshape copy's gradient, back to batched layout
    t.free(g_att.name);
    const bool w_rg = f.q_rg || f.k_rg;
    if (f.v_rg) k.alloc("gvop", nq * k.c);
    if (w_rg) k.alloc("gw", scores * k.c);
    k.free("gav");
    k.free_if_live("vrep");
    std::string g_scores;
    if (w_rg) {
      std::string gw = k.name("gw");
      if (k.c != kF32) {
        k.free_if_live("w");
        k.alloc("gw32", scores * kF32);
        k.free("gw");
        gw = k.name("gw32");
      }
      k.alloc("gs32", scores * kF32);  // softmax backward
      t.free(gw);
      k.free_if_live(k.c != kF32 ? "w32" : "w");
      g_scores = k.name("gs32");
      if (k.c != kF32) {
        k.alloc("gs3", scores * k.c);
        k.free("gs32");
        g_scores = k.name("gs3");
      }
      k.alloc("gs2", scores * k.c);  // masked_fill
      t.free(g_scores);
      k.free_if_live("mask");
      k.alloc("gs1", scores * k.c);  // scaling
      k.free("gs2");
      if (f.q_rg) k.alloc("gqc", nq * k.c);
      if (f.k_rg) k.alloc("gkop", nq * k.c);
      k.free("gs1");
    }
    k.free_if_live("w");
    k.free_if_live("qc");
    k.free_if_live("krep");
    // Branches in reverse creation order: v's repeat, k's repeat, v, k, q.
    std::string gv = f.v_rg ? k.name("gvop") : "", gk = f.k_rg && w_rg ? k.name("gkop") : "";
    if (grouped && !gv.empty()) {
      k.alloc("gv", nkv * k.c);
      t.free(gv);
      gv = k.name("gv");
    }
    if (grouped && !gk.empty()) {
      k.alloc("gk", nkv * k.c);
      t.free(gk);
      gk = k.name("gk");
    }
    Grad g_y1;
    if (!gv.empty()) {
      t.transient(nkv * k.c, kWork);  // the transposed view's gradient made contiguous
      g_y1 = projection_backward(k, p[2], gv, true, f.y1_rg);
    }
    if (!gk.empty()) {
      t.transient(3 * nkv * k.c, kWork);  // RoPE backward
      k.alloc("gklin", nkv * k.c);
      t.free(gk);
      const Grad g = projection_backward(k, p[1], k.name("gklin"), true, f.y1_rg);
      g_y1 = accumulate(t, g_y1, g, nh * k.c, k.name("gy1k"));
    }
    if (f.q_rg && w_rg) {
      t.transient(3 * nq * k.c, kWork);
      k.alloc("gqlin", nq * k.c);
      k.free("gqc");
      const Grad g = projection_backward(k, p[0], k.name("gqlin"), true, f.y1_rg);
      g_y1 = accumulate(t, g_y1, g, nh * k.c, k.name("gy1q"));
    }
    k.free_if_live("n1.y");
    if (g_y1) {
      const Grad g_x1 = rms_backward(k, "n1.", g_y1.name, f.x_rg, base);
      if (g_x1 && g_h) {  // the residual's gradient plus the norm's, in a new tensor
        k.alloc("gx", nh * k.c);
        t.free(g_x1.name);
        t.free(g_h.name);
        g_h = {k.name("gx"), false};
      } else if (g_x1) {
        g_h = g_x1;
      }
    }
  }
  // Whatever the graph still holds (unused branches) dies with it.
  for (const char* local :
       {"n1.pow", "n1.r", "n1.x32", "n1.xn", "n1.xnc", "n1.y", "n2.pow", "n2.r", "n2.x32", "n2.xn",
        "n2.xnc", "mask", "w", "w32", "qc", "krep", "vrep", "att", "h"})
    k.free_if_live(local);
  return f.x_rg && g_h ? g_h.name : std::string();
}

// --- head: final norm, LM head, cross-entropy ------------------------------

void head_forward(MemoryTimeline& t, const UnitShapes& s, const UnitCall& call, bool tied) {
  Script k(t, s, call);
  const bool base = !s.lora, x_rg = call.input_requires_grad;
  const bool logits_rg = x_rg || base;
  const std::uint64_t nv = k.n * u64(s.vocab);
  rms_forward(k, "n.", x_rg, base);
  k.alloc("logits", nv * k.c, Part::kHeadLogits);
  if (k.c != kF32) k.alloc("logits32", nv * kF32, Part::kHeadLogits);
  k.alloc("logsm", nv * kF32, Part::kHeadLogits);
  if (k.c != kF32) k.free("logits32");
  k.free("logits");
  k.die_unless("logsm", logits_rg);
  k.die_unless("n.y", base);  // saved by the LM head's weight gradient
  (void)tied;
}

std::string head_backward(MemoryTimeline& t, const UnitShapes& s, const UnitCall& call, bool tied) {
  Script k(t, s, call);
  const bool base = !s.lora, x_rg = call.input_requires_grad;
  const std::uint64_t nv = k.n * u64(s.vocab), nh = k.n * u64(s.hidden);
  k.alloc("gnll", nv * kF32, Part::kHeadLogits);
  k.alloc("glogits32", nv * kF32, Part::kHeadLogits);  // log-softmax backward
  k.free("gnll");
  k.free("logsm");
  std::string g_logits = k.name("glogits32");
  if (k.c != kF32) {
    k.alloc("glogits", nv * k.c, Part::kHeadLogits);
    k.free("glogits32");
    g_logits = k.name("glogits");
  }
  if (base && tied)
    k.alloc("tg.embedding", u64(s.vocab * s.hidden) * k.c, Part::kUnitGradientBuffers);
  if (base && !tied) k.param_grad("lm_head", u64(s.vocab * s.hidden) * k.c);
  if (x_rg) k.alloc("gy", nh * k.c);
  t.free(g_logits);
  k.free_if_live("n.y");
  Grad g_x;
  if (x_rg) g_x = rms_backward(k, "n.", k.name("gy"), true, base);
  for (const char* local : {"n.pow", "n.r", "n.x32", "n.xn", "n.xnc"}) k.free_if_live(local);
  return g_x ? g_x.name : std::string();
}

// --- embedding -------------------------------------------------------------

void embedding_forward(MemoryTimeline& t, const UnitShapes& s, const UnitCall& call,
                       const std::string& output) {
  t.allocate(output, u64(s.tokens() * s.hidden * s.compute_bytes),
             call.grad_mode ? kWork : Part::kBoundaryActivations);
}

void embedding_backward(MemoryTimeline& t, const UnitShapes& s, const UnitCall& call) {
  Script k(t, s, call);
  k.param_grad("embedding", u64(s.vocab * s.hidden) * k.c);  // dense embedding_backward
}

void free_parameter_gradients(MemoryTimeline& t, const std::string& prefix) {
  t.free_matching(prefix + "pg.");
}

}  // namespace nss::preflight
