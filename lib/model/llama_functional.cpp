#include "model/llama_functional.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <torch/torch.h>
#include <torch/version.h>

#include "arch/architecture.h"
#include "core/error.h"
#include "model/chunked_head.h"
#include "model/fused_ops.h"
#include "model/param_spec.h"
#include "model/varlen_attention.h"

namespace nss::model {
namespace {

// Positions of a block's tensors inside its parameter list (unit_parameters
// order: the family's block tensors from arch::describe, each LoRA-targeted
// projection followed by its lora_A and lora_B).
struct BlockLayout {
  int input_norm = -1;
  int post_attention_norm = -1;
  int pre_feedforward_norm = -1, post_feedforward_norm = -1;  // sandwich norms (Gemma 3)
  int q_norm = -1, k_norm = -1;  // per-head norms of q and k (Qwen3); -1: none
  int weight[7] = {};
  int bias[7] = {-1, -1, -1, -1, -1, -1, -1};    // -1: no bias on this projection
  int lora_a[7] = {-1, -1, -1, -1, -1, -1, -1};  // -1: no adapter on this projection
  std::size_t size = 0;
};

enum Projection { kQ, kK, kV, kO, kGate, kUp, kDown };

int projection_index(const std::string& name) {
  const auto& names = projection_names();
  const auto it = std::find(names.begin(), names.end(), name);
  NSS_ASSERT(it != names.end(), "model", "unknown projection " + name);
  return static_cast<int>(it - names.begin());
}

BlockLayout block_layout(const arch::Architecture& architecture, const config::LoraConfig& lora) {
  BlockLayout layout;
  int next = 0;
  for (const auto& tensor : architecture.block) {
    const int slot = next++;
    if (tensor.name == "input_layernorm.weight") layout.input_norm = slot;
    if (tensor.name == "post_attention_layernorm.weight") layout.post_attention_norm = slot;
    if (tensor.name == "pre_feedforward_layernorm.weight") layout.pre_feedforward_norm = slot;
    if (tensor.name == "post_feedforward_layernorm.weight") layout.post_feedforward_norm = slot;
    if (tensor.name == "self_attn.q_norm.weight") layout.q_norm = slot;
    if (tensor.name == "self_attn.k_norm.weight") layout.k_norm = slot;
    if (tensor.kind == arch::TensorKind::kBias)
      layout.bias[projection_index(tensor.projection)] = slot;
    if (tensor.kind != arch::TensorKind::kProjection) continue;
    const int p = projection_index(tensor.projection);
    layout.weight[p] = slot;
    const bool adapted = lora.enabled && std::find(lora.targets.begin(), lora.targets.end(),
                                                   tensor.projection) != lora.targets.end();
    if (adapted) {
      layout.lora_a[p] = next;
      next += 2;
    }
  }
  layout.size = static_cast<std::size_t>(next);
  return layout;
}

// x W^T for one adapter matrix; per-example adapters (DP-SGD,
// fsdp/per_example_gradients.h) carry a leading row dimension, W[i] for row i.
torch::Tensor adapter(const torch::Tensor& x, const torch::Tensor& w) {
  return w.dim() == 3 ? torch::matmul(x, w.transpose(1, 2)) : torch::linear(x, w);
}

bool is_row_parallel(int p) {
  return p == kO || p == kDown;
}

// A block's tensors as one tensor rank computes with them: those whose
// gradient each rank sees only a part of have it summed over the ranks that
// share them (model/tensor_parallel_ops.h). The norms and a row-parallel
// layer's bias only with sequence parallelism: without it they act on the
// same whole activations on every rank.
std::vector<torch::Tensor> tensor_parallel_params(std::vector<torch::Tensor> params,
                                                  const BlockLayout& layout,
                                                  const TensorParallel* tp) {
  if (!tp || tp->size() == 1) return params;
  comm::Communicator& group = *tp->group;
  const auto sum_over = [&](int slot, comm::Communicator& over) {
    if (slot >= 0) params[slot] = sum_gradient_over(params[slot], over);
  };
  sum_over(layout.q_norm, group);
  sum_over(layout.k_norm, group);
  if (tp->sequence_parallel)
    for (int norm : {layout.input_norm, layout.post_attention_norm, layout.pre_feedforward_norm,
                     layout.post_feedforward_norm})
      sum_over(norm, group);
  for (int p = kQ; p <= kDown; ++p) {
    const int a = layout.lora_a[p];
    const bool kv_shared = tp->kv_group && (p == kK || p == kV);
    if (kv_shared) {
      sum_over(layout.weight[p], *tp->kv_group);
      sum_over(layout.bias[p], *tp->kv_group);
      if (a >= 0) sum_over(a + 1, *tp->kv_group);
    }
    if (is_row_parallel(p)) {
      if (a >= 0) sum_over(a + 1, group);  // B whole, its input a sum of the ranks' parts
      if (tp->sequence_parallel) sum_over(layout.bias[p], group);
    } else if (a >= 0) {
      sum_over(a, group);  // A whole, its output read by each rank's rows of B
    }
  }
  return params;
}

// A block's projections, with their LoRA adapters and dropout; under tensor
// parallelism this rank's part of each (arch/tensor_parallel.h).
class BlockProjections {
 public:
  BlockProjections(const std::vector<torch::Tensor>& params, const arch::Architecture& architecture,
                   const config::LoraConfig& lora, const DropoutKey* dropout, double eps,
                   const TensorParallel* tp)
      : lora_(lora),
        layout_(block_layout(architecture, lora)),
        dropout_(dropout),
        scale_(architecture.family->norm_scale),
        eps_(eps),
        tp_(tp && tp->size() > 1 ? tp : nullptr) {
    NSS_ASSERT(params.size() == layout_.size, "model",
               "a decoder block takes " + std::to_string(layout_.size) + " tensors, got " +
                   std::to_string(params.size()));
    params_ = tensor_parallel_params(params, layout_, tp_);
  }

  // Into a column-parallel region (the whole sequence on every tensor rank).
  torch::Tensor enter(const torch::Tensor& x) const {
    if (!tp_) return x;
    return tp_->sequence_parallel ? gather_sequence(x, *tp_->group)
                                  : enter_parallel_region(x, *tp_->group);
  }

  // x through the block's norm at `slot` (-1: the family has none there, x itself).
  torch::Tensor norm(int slot, const torch::Tensor& x) const {
    return slot < 0 ? x : rms_norm(x, params_[slot], eps_, scale_);
  }
  torch::Tensor input_norm(const torch::Tensor& x) const { return norm(layout_.input_norm, x); }
  torch::Tensor post_attention_norm(const torch::Tensor& x) const {
    return norm(layout_.post_attention_norm, x);
  }
  torch::Tensor pre_feedforward_norm(const torch::Tensor& x) const {
    return norm(layout_.pre_feedforward_norm, x);
  }
  torch::Tensor post_feedforward_norm(const torch::Tensor& x) const {
    return norm(layout_.post_feedforward_norm, x);
  }
  bool sandwich() const { return layout_.pre_feedforward_norm >= 0; }

  // Projection p's output as [B, heads, S, D], each head RMS-normalised
  // first when the family has a q or k norm (Qwen3, Gemma 3).
  torch::Tensor heads(Projection p, const torch::Tensor& x, std::int64_t heads,
                      std::int64_t d) const {
    const torch::Tensor t = (*this)(p, x).view({x.size(0), x.size(1), heads, d});
    return norm(p == kQ ? layout_.q_norm : p == kK ? layout_.k_norm : -1, t).transpose(1, 2);
  }

  // PEFT's Linear: base(x) + lora_B(lora_A(dropout(x))) * alpha / r; the
  // base with its bias when the family has one. A row-parallel layer's
  // parts are summed over the tensor ranks (reduce-scattered along the
  // sequence with sequence parallelism) before its bias is added.
  torch::Tensor operator()(Projection p, const torch::Tensor& x) const {
    const bool row_parallel = tp_ && is_row_parallel(p);
    const int bias = layout_.bias[p];
    const torch::Tensor whole_bias = bias < 0 ? torch::Tensor() : params_[bias];
    torch::Tensor y =
        torch::linear(x, params_[layout_.weight[p]], row_parallel ? torch::Tensor() : whole_bias);
    const int a = layout_.lora_a[p];
    if (a >= 0) {
      const double scaling = lora_.alpha / static_cast<double>(lora_.rank);
      y = y +
          adapter(adapter(dropped_out(p, x, row_parallel), params_[a]), params_[a + 1]) * scaling;
    }
    if (!row_parallel) return y;
    y = tp_->sequence_parallel ? reduce_scatter_sequence(y, *tp_->group)
                               : reduce_parallel_region(y, *tp_->group);
    return whole_bias.defined() ? y + whole_bias : y;
  }

 private:
  // LoRA's input: x after dropout; a row-parallel layer's x is this rank's
  // features of the whole input, and gets their part of its mask.
  torch::Tensor dropped_out(Projection p, const torch::Tensor& x, bool row_parallel) const {
    if (!dropout_ || lora_.dropout <= 0) return x;
    const std::int64_t features = x.size(2);
    return x * (row_parallel
                    ? lora_dropout_multiplier(x, *dropout_, p, lora_.dropout,
                                              tp_->rank() * features, tp_->size() * features)
                    : lora_dropout_multiplier(x, *dropout_, p, lora_.dropout));
  }

  std::vector<torch::Tensor> params_;
  const config::LoraConfig& lora_;
  BlockLayout layout_;
  const DropoutKey* dropout_;
  arch::NormScale scale_;
  double eps_;
  const TensorParallel* tp_;  // nullptr: whole tensors
};

// [B, kv_heads, S, D] -> [B, kv_heads * groups, S, D], head h reading kv head h / groups (HF
// repeat_kv).
torch::Tensor repeat_kv(const torch::Tensor& x, std::int64_t groups) {
  if (groups == 1) return x;
  const auto b = x.size(0), heads = x.size(1), s = x.size(2), d = x.size(3);
  return x.unsqueeze(2).expand({b, heads, groups, s, d}).reshape({b, heads * groups, s, d});
}

// How a layer attends besides causally: within `window` keys when it is > 0,
// q.k scaled by `scale` (0: head_dim^-1/2).
struct AttentionRule {
  std::int64_t window = 0;
  double scale = 0;
  bool windowed(std::int64_t keys) const { return window > 0 && window < keys; }
};

// Causal attention of rows of s queries and keys under `rule`.
torch::Tensor causal_attention(const torch::Tensor& q, const torch::Tensor& k,
                               const torch::Tensor& v, const AttentionRule& rule) {
  const std::int64_t s = q.size(2);
  if (!rule.windowed(s)) return masked_attention(q, k, v, {}, rule.scale);
  return masked_attention(q, k, v, sliding_window_mask(s, s, rule.window, q.device()), rule.scale);
}

// Causal attention, or inside each document of packed rows, under `rule`.
torch::Tensor attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                        const DocumentMask* documents, const AttentionRule& rule) {
  if (!documents) return causal_attention(q, k, v, rule);
  if (documents->allowed.defined()) {
    const std::int64_t s = q.size(2);
    const torch::Tensor& allowed = documents->allowed;
    return masked_attention(
        q, k, v,
        rule.windowed(s) ? allowed.logical_and(sliding_window_mask(s, s, rule.window, q.device()))
                         : allowed,
        rule.scale);
  }
  // The variable-length kernels attend causally at head_dim^-1/2 only.
  const bool plain = !rule.windowed(documents->longest_span) && rule.scale == 0;
  if (documents->cumulative_lengths.defined() && plain && varlen_attention_applies(q))
    return varlen_attention(q, k, v, documents->cumulative_lengths, documents->longest_span);
  std::vector<torch::Tensor> rows;
  for (std::size_t b = 0; b < documents->spans.size(); ++b) {
    const auto row = static_cast<std::int64_t>(b);
    std::vector<torch::Tensor> pieces;
    for (const DocumentMask::Span& span : documents->spans[b]) {
      const auto slice = [&](const torch::Tensor& t) {
        return t.narrow(0, row, 1).narrow(2, span.first, span.end - span.first);
      };
      pieces.push_back(span.padding ? torch::zeros_like(slice(q))
                                    : causal_attention(slice(q), slice(k), slice(v), rule));
    }
    rows.push_back(pieces.size() == 1 ? pieces.front() : torch::cat(pieces, 2));
  }
  return rows.size() == 1 ? rows.front() : torch::cat(rows, 0);
}

// The gated MLP: down(act(gate(y)) * up(y)).
torch::Tensor mlp(const BlockProjections& proj, const torch::Tensor& normed,
                  arch::Activation activation) {
  const torch::Tensor y = proj.enter(normed);
  const torch::Tensor gate = proj(kGate, y), up = proj(kUp, y);
  if (activation == arch::Activation::kGeluTanh) return proj(kDown, torch::gelu(gate, "tanh") * up);
  return proj(kDown, fused_kernels_enabled(gate) ? fused_swiglu(gate, up) : torch::silu(gate) * up);
}

}  // namespace

// Like HF's eager path, the softmax is in float32 (SDPA's kernels accumulate in it).
torch::Tensor masked_attention(const torch::Tensor& q, const torch::Tensor& k,
                               const torch::Tensor& v, const torch::Tensor& allowed, double scale) {
#if NSS_HAVE_FUSED_ATTENTION
  const std::optional<double> scaling = scale > 0 ? std::optional<double>(scale) : std::nullopt;
  if (allowed.defined())
    return at::scaled_dot_product_attention(q, k, v, allowed, 0.0, false, scaling);
  return at::scaled_dot_product_attention(q, k, v, {}, 0.0, /*is_causal=*/true, scaling);
#else
  const std::int64_t s = q.size(2);
  const double scaling = scale > 0 ? scale : 1.0 / std::sqrt(static_cast<double>(q.size(3)));
  // Scaled and masked in place (matmul's backward needs q and k, not its
  // output), the mask added as 0 / -inf: the same values as masked_fill, one
  // scores-sized pass less in backward (an add passes its gradient through).
  const auto options = torch::TensorOptions().dtype(q.scalar_type()).device(q.device());
  const float hidden = -std::numeric_limits<float>::infinity();
  const torch::Tensor bias =
      allowed.defined() ? torch::zeros(allowed.sizes(), options).masked_fill_(~allowed, hidden)
                        : torch::full({s, s}, hidden, options).triu_(1);
  const torch::Tensor scores = torch::matmul(q, k.transpose(2, 3)).mul_(scaling).add_(bias);
  const torch::Tensor weights = torch::softmax(scores, -1, torch::kFloat32).to(q.scalar_type());
  return torch::matmul(weights, v);
#endif
}

torch::Tensor sliding_window_mask(std::int64_t queries, std::int64_t keys, std::int64_t window,
                                  torch::Device device) {
  const auto options = torch::TensorOptions().dtype(torch::kInt64).device(device);
  const torch::Tensor query_slots = torch::arange(keys - queries, keys, options).unsqueeze(1);
  const torch::Tensor distance = query_slots - torch::arange(keys, options).unsqueeze(0);
  return distance.ge(0).logical_and(distance.lt(window));
}

DocumentMask document_mask(const torch::Tensor& positions, const torch::Tensor& segments) {
  return document_mask(
      positions, segments,
      plan::packed_attention(segments.is_cuda() ? DeviceKind::kCuda : DeviceKind::kCpu,
                             plan::environment_switches()));
}

DocumentMask document_mask(const torch::Tensor& positions, const torch::Tensor& segments,
                           DocumentAttention how) {
  DocumentMask documents;
  documents.positions = positions;
  if (how == DocumentAttention::kMask) {
    const std::int64_t s = segments.size(1);
    const torch::Tensor causal =
        torch::ones({s, s}, torch::TensorOptions().dtype(torch::kBool).device(segments.device()))
            .tril();
    const torch::Tensor same = segments.unsqueeze(2).eq(segments.unsqueeze(1));  // [B, S, S]
    documents.allowed = same.logical_and(causal).unsqueeze(1);
    return documents;
  }
  const torch::Tensor host = segments.to(torch::kCPU, torch::kInt64).contiguous();
  const std::int64_t rows = host.size(0), s = host.size(1);
  const std::int64_t* ids = host.data_ptr<std::int64_t>();
  documents.spans.resize(static_cast<std::size_t>(rows));
  for (std::int64_t b = 0; b < rows; ++b) {
    const std::int64_t* row = ids + b * s;
    for (std::int64_t first = 0, i = 1; i <= s; ++i)
      if (i == s || row[i] != row[first]) {
        documents.spans[static_cast<std::size_t>(b)].push_back({first, i, row[first] < 0});
        first = i;
      }
  }
  if (how == DocumentAttention::kVarlen) {
    std::vector<std::int32_t> cumulative{0};
    for (const auto& row : documents.spans)
      for (const DocumentMask::Span& span : row) {
        cumulative.push_back(cumulative.back() + static_cast<std::int32_t>(span.end - span.first));
        documents.longest_span = std::max(documents.longest_span, span.end - span.first);
      }
    documents.cumulative_lengths =
        torch::from_blob(cumulative.data(), {static_cast<std::int64_t>(cumulative.size())},
                         torch::kInt32)
            .to(segments.device(), torch::kInt32, /*non_blocking=*/false, /*copy=*/true);
  }
  return documents;
}

namespace {

// Each tensor rank looks up the tokens among its rows of the vocabulary
// (zeros for the others); their sum is the embedding, split along the
// sequence with sequence parallelism.
torch::Tensor vocab_parallel_embedding(const torch::Tensor& tokens, const torch::Tensor& weight,
                                       const TensorParallel& tp) {
  const std::int64_t rows = weight.size(0);
  const torch::Tensor local = tokens - tp.rank() * rows;
  const torch::Tensor here = local.ge(0).logical_and(local.lt(rows));
  const torch::Tensor part = torch::embedding(weight, local.clamp(0, rows - 1)) *
                             here.unsqueeze(-1).to(weight.scalar_type());
  return tp.sequence_parallel ? reduce_scatter_sequence(part, *tp.group)
                              : reduce_parallel_region(part, *tp.group);
}

}  // namespace

torch::Tensor embedding_forward(const torch::Tensor& tokens, const torch::Tensor& weight,
                                const arch::Architecture& architecture, const TensorParallel* tp) {
  const torch::Tensor embedded = tp && tp->size() > 1
                                     ? vocab_parallel_embedding(tokens, weight, *tp)
                                     : torch::embedding(weight, tokens);
  const double scale = architecture.embedding_scale;
  if (scale == 1.0) return embedded;
  // Gemma: a float32 scalar cast to the weight's dtype, then the product in it.
  return embedded * torch::scalar_tensor(scale, torch::kFloat32).to(weight.scalar_type());
}

torch::Tensor rms_norm(const torch::Tensor& x, const torch::Tensor& weight, double eps,
                       arch::NormScale scale) {
  const bool plain_weight = scale == arch::NormScale::kWeight;
  // One weight of x's dtype (per-example weights take the libtorch ops); no
  // float32 copy of x on this path.
  if (plain_weight && fused_kernels_enabled(x) && weight.dim() == 1 &&
      weight.scalar_type() == x.scalar_type())
    return fused_rms_norm(x, weight, eps);
  const torch::Tensor x32 = x.to(torch::kFloat32);
  const torch::Tensor normed = x32 * torch::rsqrt(x32.pow(2).mean(-1, /*keepdim=*/true) + eps);
  if (plain_weight) return weight * normed.to(x.scalar_type());
  // Gemma: scaled by 1 + weight in float32, then cast.
  return (normed * (1.0 + weight.to(torch::kFloat32))).to(x.scalar_type());
}

double attention_scale(const config::ModelConfig& model, const arch::Architecture& architecture) {
  const double scale = architecture.query_scale;
  const double standard = 1.0 / std::sqrt(static_cast<double>(model.head_dim));
  return std::fabs(scale - standard) <= 1e-12 * standard ? 0.0 : scale;
}

namespace {

// The query and key/value heads of a block on this rank.
struct BlockHeads {
  std::int64_t query = 0, key_value = 0;
};
BlockHeads block_heads(const config::ModelConfig& model, const LayerPlan& layer) {
  const TensorParallel* tp = layer.tensor_parallel;
  if (!tp || tp->size() == 1) return {model.num_attention_heads, model.num_key_value_heads};
  return {tp->plan->heads_per_rank, tp->plan->kv_heads_per_rank};
}

}  // namespace

BlockAttention block_attention(const config::ModelConfig& model, const DocumentMask* documents,
                               const LayerPlan& layer) {
  const BlockHeads heads = block_heads(model, layer);
  const std::int64_t groups = heads.query / heads.key_value;
  const AttentionRule rule{layer.window, attention_scale(model, *layer.architecture)};
  return [groups, documents, rule](const torch::Tensor& q, const torch::Tensor& k,
                                   const torch::Tensor& v) {
    return attention(q, repeat_kv(k, groups), repeat_kv(v, groups), documents, rule);
  };
}

torch::Tensor decoder_block_forward(const torch::Tensor& hidden,
                                    const std::vector<torch::Tensor>& params,
                                    const config::ModelConfig& model,
                                    const config::LoraConfig& lora, const LayerPlan& layer,
                                    const DropoutKey* dropout, const DocumentMask* documents) {
  return decoder_block_forward(hidden, params, model, lora, layer, dropout,
                               documents ? documents->positions : torch::Tensor(),
                               block_attention(model, documents, layer));
}

torch::Tensor decoder_block_forward(const torch::Tensor& hidden,
                                    const std::vector<torch::Tensor>& params,
                                    const config::ModelConfig& model,
                                    const config::LoraConfig& lora, const LayerPlan& layer,
                                    const DropoutKey* dropout, const torch::Tensor& positions,
                                    const BlockAttention& attend) {
  const arch::Architecture& architecture = *layer.architecture;
  const RotaryEmbedding* rope = layer.rope;
  const BlockProjections proj(params, architecture, lora, dropout, model.rms_norm_eps,
                              layer.tensor_parallel);
  const BlockHeads local = block_heads(model, layer);
  const std::int64_t heads = local.query, kv_heads = local.key_value;
  const std::int64_t d = model.head_dim;

  // The whole sequence from here to the output projection (sequence
  // parallelism splits `hidden` along it).
  const torch::Tensor x = proj.enter(proj.input_norm(hidden));
  const std::int64_t b = x.size(0), s = x.size(1);
  const auto rotate = [&](const torch::Tensor& t) {
    if (!rope) return t;
    return positions.defined() ? rope->apply(t, positions) : rope->apply(t);
  };
  const torch::Tensor q = rotate(proj.heads(kQ, x, heads, d));
  const torch::Tensor k = rotate(proj.heads(kK, x, kv_heads, d));
  const torch::Tensor v = proj(kV, x).view({b, s, kv_heads, d}).transpose(1, 2);
  const torch::Tensor attended = attend(q, k, v).transpose(1, 2).reshape({b, s, heads * d});
  const torch::Tensor attention_out = proj(kO, attended);
  // Sandwich norms (Gemma 3): the attention's and the MLP's outputs are normed
  // before their residuals, the MLP's input by a norm of its own.
  if (proj.sandwich()) {
    const torch::Tensor h = hidden + proj.post_attention_norm(attention_out);
    return h + proj.post_feedforward_norm(
                   mlp(proj, proj.pre_feedforward_norm(h), architecture.family->activation));
  }
  const torch::Tensor h = hidden + attention_out;
  return h + mlp(proj, proj.post_attention_norm(h), architecture.family->activation);
}

torch::Tensor final_norm(const torch::Tensor& hidden, const torch::Tensor& weight,
                         const config::ModelConfig& model) {
  return rms_norm(hidden, weight, model.rms_norm_eps, arch::family(model.family).norm_scale);
}

torch::Tensor head_logits_forward(const torch::Tensor& hidden, const torch::Tensor& norm_weight,
                                  const torch::Tensor& lm_head_weight,
                                  const config::ModelConfig& model) {
  return torch::linear(final_norm(hidden, norm_weight, model), lm_head_weight);
}

namespace {

// The head with the vocabulary split over the tensor ranks: the whole
// sequence's normed states on every rank, each rank's rows of the logits,
// the loss summed over them chunk by chunk (chunked_head.h); never all the
// logits on one rank.
torch::Tensor vocab_parallel_head_loss(const torch::Tensor& hidden,
                                       const torch::Tensor& norm_weight,
                                       const torch::Tensor& lm_head_weight,
                                       const torch::Tensor& targets, const torch::Tensor& weights,
                                       const config::ModelConfig& model, std::int64_t chunk_tokens,
                                       const TensorParallel& tp) {
  comm::Communicator& group = *tp.group;
  const torch::Tensor norm =
      tp.sequence_parallel ? sum_gradient_over(norm_weight, group) : norm_weight;
  const torch::Tensor local = final_norm(hidden, norm, model);
  const torch::Tensor normed =
      tp.sequence_parallel ? gather_sequence(local, group) : enter_parallel_region(local, group);
  const std::int64_t rows = lm_head_weight.size(0), first = tp.rank() * rows;
  const VocabShard shard{&group, first,
                         std::clamp<std::int64_t>(model.vocab_size - first, 0, rows)};
  const torch::Tensor flat = normed.reshape({-1, normed.size(-1)});
  return chunked_linear_cross_entropy(flat, lm_head_weight, targets.reshape({-1}),
                                      weights.reshape({-1}),
                                      chunk_tokens > 0 ? chunk_tokens : flat.size(0), &shard);
}

}  // namespace

torch::Tensor head_loss_forward(const torch::Tensor& hidden, const torch::Tensor& norm_weight,
                                const torch::Tensor& lm_head_weight, const torch::Tensor& targets,
                                const torch::Tensor& weights, const config::ModelConfig& model,
                                std::int64_t chunk_tokens, const TensorParallel* tp) {
  if (tp && tp->size() > 1)
    return vocab_parallel_head_loss(hidden, norm_weight, lm_head_weight, targets, weights, model,
                                    chunk_tokens, *tp);
  // The chunked head's gradients are those of one shared weight: a weight
  // with a row per example (per-example gradients) goes the unfused way.
  if (chunk_tokens > 0 && norm_weight.dim() == 1 && lm_head_weight.dim() == 2) {
    const torch::Tensor normed = final_norm(hidden, norm_weight, model);
    return chunked_linear_cross_entropy(normed.reshape({-1, normed.size(-1)}), lm_head_weight,
                                        targets.reshape({-1}), weights.reshape({-1}), chunk_tokens);
  }
  const torch::Tensor logits =
      head_logits_forward(hidden, norm_weight, lm_head_weight, model).to(torch::kFloat32);
  const torch::Tensor flat = logits.reshape({-1, logits.size(-1)});
  // logsumexp, not cross_entropy: torch's float32 log_softmax accumulates
  // exp(x) in a way that is 1.6e-5 off on Qwen2.5's 152k vocabulary, where
  // logsumexp (and the chunked head) stay within 1e-7 of float64.
  const torch::Tensor per_token =
      torch::logsumexp(flat, -1) - flat.gather(1, targets.reshape({-1, 1})).squeeze(1);
  return (per_token * weights.reshape({-1}).to(torch::kFloat32)).sum();
}

}  // namespace nss::model
