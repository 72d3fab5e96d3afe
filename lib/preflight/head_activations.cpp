// The head's and the embedding's closed-form activations (unit_activations.h).
#include <algorithm>
#include <string>

#include "preflight/activation_bytes.h"
#include "preflight/unit_activations.h"

namespace nss::preflight {
namespace {

using namespace activations;  // NOLINT: the byte terms of activation_bytes.h
using Part = MemoryPart;

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
  const std::uint64_t product = u64(s.vocab * s.hidden) * (b.c + when(s.casts_by_copy, kF32));
  const std::uint64_t chunk =
      b.fp32() ? kF32 * cv : kF32 * cv + b.c * cv + when(grads && base, product);
  t.transient(norm_peak(b), Part::kHeadLogits);
  if (grads)
    t.allocate(name(call, "head_grads"), when(base, kF32 * u64(s.vocab * s.hidden)) + kF32 * b.nh,
               Part::kHeadLogits);
  // Under sequence parallelism the normed part stays beside its gathered whole.
  t.transient(norm + b.c * b.nhs + when(b.ns != b.n, b.c * b.nh) + chunk, Part::kHeadLogits);
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
  t.allocate(name(call, "gx"), b.c * b.nhs, Part::kUnitWorkingSet);
  return name(call, "gx");
}

}  // namespace

void head_forward(MemoryTimeline& t, const UnitShapes& s, const UnitCall& call) {
  if (s.loss_chunk_tokens > 0) return chunked_head_forward(t, s, call);
  const Bytes b(s);
  const bool base = !s.lora, x = call.input_requires_grad;
  const std::uint64_t nv = b.n * u64(s.vocab);
  // Norm, logits (and their fp32 copy in bf16 runs), logsumexp's exp.
  const std::uint64_t norm = call.grad_mode ? norm_graph(b, x, base) : 0;
  t.transient(
      std::max(norm_peak(b), norm + b.c * b.nh + b.c * nv + when(!b.fp32(), kF32 * nv) + kF32 * nv),
      Part::kHeadLogits);
  if (!call.grad_mode) return;
  t.allocate(name(call, "graph"), norm + when(base, b.c * b.nh), Part::kUnitWorkingSet);
  t.allocate(name(call, "kept_logits"), when(x || base, kF32 * nv), Part::kHeadLogits);
}

std::string head_backward(MemoryTimeline& t, const UnitShapes& s, const UnitCall& call, bool tied) {
  if (s.loss_chunk_tokens > 0) return chunked_head_backward(t, s, call, tied);
  const Bytes b(s);
  const bool base = !s.lora, x = call.input_requires_grad;
  const std::uint64_t nv = b.n * u64(s.vocab);
  // Beside the kept float32 logits, logsumexp's backward: the logits minus
  // their logsumexp, its exp and its product with the incoming gradient.
  t.transient(3 * kF32 * nv, Part::kHeadLogits);
  t.free(name(call, "kept_logits"));
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
  const Bytes b(s);
  t.allocate(output, b.c * b.nhs,
             call.grad_mode ? Part::kUnitWorkingSet : Part::kBoundaryActivations);
}

void embedding_backward(MemoryTimeline& t, const UnitShapes& s, const UnitCall& call) {
  t.allocate(name(call, "pg.embedding"), u64(s.vocab * s.hidden * s.compute_bytes),
             Part::kUnitGradientBuffers);
}

}  // namespace nss::preflight
