#include "model/chunked_head.h"

#include <algorithm>
#include <limits>

#include <torch/torch.h>

#include "core/error.h"

namespace nss::model {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

struct ChunkedHeadResult {
  torch::Tensor loss;         // float32 scalar
  torch::Tensor grad_normed;  // float32 [T, H], or undefined
  torch::Tensor grad_weight;  // float32 [V, H], or undefined
};

// Reduces a float32 tensor over the shard's group in place (nothing without one).
void reduce_over(const VocabShard* shard, torch::Tensor& values, comm::ReduceOp op) {
  if (!shard || shard->group->size() == 1) return;
  values = values.contiguous();
  shard->group->all_reduce(values.data_ptr(), static_cast<std::size_t>(values.numel()),
                           DType::kFloat32, op);
}

// Where each target sits in this rank's rows (clamped to one of them) and
// whether it is there at all: [n, 1] int64 and float32 (undefined without a
// shard: every target is here).
struct LocalTargets {
  torch::Tensor index;
  torch::Tensor here;
  torch::Tensor only_here(const torch::Tensor& values) const {
    return here.defined() ? values * here : values;
  }
};
LocalTargets local_targets(const torch::Tensor& target, const VocabShard* shard,
                           std::int64_t rows) {
  if (!shard) return {target, torch::Tensor()};
  const torch::Tensor local = target - shard->first;
  const torch::Tensor here = local.ge(0).logical_and(local.lt(shard->valid));
  return {local.clamp(0, rows - 1), here.to(torch::kFloat32)};
}

// The chunk loop. Per chunk the working set is its logits (compute dtype)
// and their float32 copy, which becomes the logits' gradient in place (and
// its compute-dtype copy in bf16 runs): O(chunk x vocab), never T x vocab.
ChunkedHeadResult chunked_head(const torch::Tensor& normed, const torch::Tensor& weight,
                               const torch::Tensor& targets, const torch::Tensor& weights,
                               std::int64_t chunk_tokens, bool need_normed, bool need_weight,
                               const VocabShard* shard) {
  torch::NoGradGuard no_grad;
  const std::int64_t tokens = normed.size(0);
  const auto f32 = normed.options().dtype(torch::kFloat32);
  const bool fp32 = weight.scalar_type() == torch::kFloat32;
  ChunkedHeadResult r;
  r.loss = torch::zeros({}, f32);
  if (need_normed) r.grad_normed = torch::empty({tokens, normed.size(1)}, f32);
  if (need_weight) r.grad_weight = torch::zeros({weight.size(0), weight.size(1)}, f32);
  for (std::int64_t first = 0; first < tokens; first += chunk_tokens) {
    const std::int64_t n = std::min(chunk_tokens, tokens - first);
    const torch::Tensor x = normed.narrow(0, first, n);
    const torch::Tensor target = targets.narrow(0, first, n).unsqueeze(1);
    const torch::Tensor w = weights.narrow(0, first, n).to(torch::kFloat32).unsqueeze(1);
    // Shifted by the row maximum and exponentiated in place: one float32
    // [n, V] buffer holds the logits, then exp, then the logits' gradient.
    torch::Tensor logits = torch::linear(x, weight).to(torch::kFloat32);  // [n, V]
    if (shard && shard->valid < weight.size(0))
      logits.narrow(1, shard->valid, weight.size(0) - shard->valid)
          .fill_(-std::numeric_limits<float>::infinity());
    torch::Tensor row_max = std::get<0>(logits.max(1, /*keepdim=*/true));
    reduce_over(shard, row_max, comm::ReduceOp::kMax);
    logits.sub_(row_max);
    const LocalTargets local = local_targets(target, shard, weight.size(0));
    torch::Tensor target_logit = local.only_here(logits.gather(1, local.index));
    reduce_over(shard, target_logit, comm::ReduceOp::kSum);
    torch::Tensor sum_exp = logits.exp_().sum(1, /*keepdim=*/true);
    reduce_over(shard, sum_exp, comm::ReduceOp::kSum);
    r.loss += ((sum_exp.log() - target_logit) * w).sum();
    if (!need_normed && !need_weight) continue;
    // d loss / d logits = w * (softmax - onehot(target)), in place.
    torch::Tensor& grad = logits;
    grad.mul_(w / sum_exp);
    grad.scatter_add_(1, local.index, local.only_here(-w));
    const torch::Tensor grad_c = fp32 ? grad : grad.to(weight.scalar_type());
    if (need_normed) r.grad_normed.narrow(0, first, n).copy_(torch::mm(grad_c, weight));
    if (need_weight) {
      if (fp32)
        r.grad_weight.addmm_(grad.t(), x);
      else
        r.grad_weight.add_(torch::mm(grad_c.t(), x));
    }
  }
  return r;
}

// The saved gradients scaled by the incoming one; the loss is linear in
// nothing else, so this is the whole backward.
struct ChunkedLinearCrossEntropy : public torch::autograd::Function<ChunkedLinearCrossEntropy> {
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& normed,
                               const torch::Tensor& weight, const torch::Tensor& targets,
                               const torch::Tensor& weights, std::int64_t chunk_tokens,
                               bool need_normed, bool need_weight, std::int64_t shard) {
    ChunkedHeadResult r =
        chunked_head(normed, weight, targets, weights, chunk_tokens, need_normed, need_weight,
                     reinterpret_cast<const VocabShard*>(static_cast<std::intptr_t>(shard)));
    ctx->saved_data["normed_dtype"] = static_cast<std::int64_t>(normed.scalar_type());
    ctx->saved_data["weight_dtype"] = static_cast<std::int64_t>(weight.scalar_type());
    if (need_normed) ctx->saved_data["grad_normed"] = std::move(r.grad_normed);
    if (need_weight) ctx->saved_data["grad_weight"] = std::move(r.grad_weight);
    return r.loss;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const torch::Tensor& scale = grad_outputs[0];
    // Taken out of the context and scaled in place: the [V, H] buffer is
    // the gradient autograd passes on (fp32 runs), never copied.
    const auto take = [&](const char* key, const char* dtype_key) {
      if (!ctx->saved_data.count(key)) return torch::Tensor();
      torch::Tensor grad = ctx->saved_data.at(key).toTensor();
      ctx->saved_data.erase(key);
      grad.mul_(scale);
      const auto dtype = static_cast<torch::ScalarType>(ctx->saved_data.at(dtype_key).toInt());
      return grad.scalar_type() == dtype ? grad : grad.to(dtype);
    };
    torch::Tensor grad_normed = take("grad_normed", "normed_dtype");
    torch::Tensor grad_weight = take("grad_weight", "weight_dtype");
    return {grad_normed,     grad_weight,     torch::Tensor(), torch::Tensor(),
            torch::Tensor(), torch::Tensor(), torch::Tensor(), torch::Tensor()};
  }
};

}  // namespace

torch::Tensor chunked_linear_cross_entropy(const torch::Tensor& normed, const torch::Tensor& weight,
                                           const torch::Tensor& targets,
                                           const torch::Tensor& weights, std::int64_t chunk_tokens,
                                           const VocabShard* shard) {
  NSS_ASSERT(chunk_tokens >= 1 && normed.dim() == 2 && weight.dim() == 2 &&
                 normed.size(1) == weight.size(1),
             "model", "the chunked head takes normed [T, H], weight [V, H] and chunk_tokens >= 1");
  // Grad mode is off inside a Function's forward: ask here. The checkpointed
  // forward (no grad) computes the loss alone.
  const bool grad = torch::GradMode::is_enabled();
  const bool need_normed = grad && normed.requires_grad();
  const bool need_weight = grad && weight.requires_grad();
  if (!need_normed && !need_weight)
    return chunked_head(normed, weight, targets, weights, chunk_tokens, false, false, shard).loss;
  // The shard's address travels through the autograd context as an integer;
  // only the forward reads it, inside this call.
  return ChunkedLinearCrossEntropy::apply(
      normed, weight, targets, weights, chunk_tokens, need_normed, need_weight,
      static_cast<std::int64_t>(reinterpret_cast<std::intptr_t>(shard)));
}

}  // namespace nss::model
