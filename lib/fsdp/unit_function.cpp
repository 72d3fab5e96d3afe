#include "fsdp/unit_function.h"

#include <optional>

#include <torch/torch.h>

#include "core/error.h"

namespace nss::fsdp {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// One unit's flat buffers gathered in the compute dtype (the quantised one
// dequantised; empty when the unit has none).
struct GatheredBuffers {
  torch::Tensor trainable, frozen, quantized;
};

// A unit's buffers and its tied unit's, gathered for one forward or recompute.
struct GatheredUnits {
  GatheredBuffers unit;
  std::optional<GatheredBuffers> tied;
};

GatheredBuffers gather_buffers(ShardedUnit& unit, const char* phase) {
  GatheredBuffers b;
  b.trainable = unit.gather(FlatBuffer::kTrainable, phase);
  b.frozen = unit.gather(FlatBuffer::kFrozen, phase);
  b.quantized = unit.gather(FlatBuffer::kQuantized, phase);
  return b;
}

GatheredUnits gather_units(ShardedUnit& unit, ShardedUnit* tied, const char* phase) {
  GatheredUnits g;
  g.unit = gather_buffers(unit, phase);
  if (tied) g.tied = gather_buffers(*tied, phase);
  return g;
}

// Without resharding after forward the buffers wait in the autograd context
// for the recompute, as one tensor list: the unit's three, then the tied unit's.
constexpr const char* kKeptBuffers = "kept_buffers";

void keep_buffers(AutogradContext* ctx, const GatheredUnits& g) {
  std::vector<torch::Tensor> list = {g.unit.trainable, g.unit.frozen, g.unit.quantized};
  if (g.tied) list.insert(list.end(), {g.tied->trainable, g.tied->frozen, g.tied->quantized});
  ctx->saved_data[kKeptBuffers] = list;
}

// Takes the kept buffers out of the context: the recompute's views hold them
// from here on, and they go with those views once the gradients exist.
GatheredUnits take_kept_buffers(AutogradContext* ctx) {
  const std::vector<torch::Tensor> list = ctx->saved_data.at(kKeptBuffers).toTensorVector();
  ctx->saved_data.erase(kKeptBuffers);
  GatheredUnits g;
  g.unit = {list[0], list[1], list[2]};
  if (list.size() == 6) g.tied = GatheredBuffers{list[3], list[4], list[5]};
  return g;
}

// One unit's (and its tied unit's) parameters for one forward or recompute:
// views into its gathered flat buffers. Trainable views become separate
// autograd leaves when their gradient is needed, so autograd returns one
// gradient per parameter instead of materialising a full-buffer zero tensor
// per view (what the backward of narrow() on a flat leaf would do).
struct UnitParams {
  std::vector<torch::Tensor> unit, tied;

  std::vector<torch::Tensor> all() const {
    std::vector<torch::Tensor> params = unit;
    params.insert(params.end(), tied.begin(), tied.end());
    return params;
  }
};

// A trainable view as the leaf autograd differentiates against. Per example
// (DP-SGD) it is expanded to [rows, shape...] without copying, so each row's
// computation reads its own slice and autograd returns one gradient per row.
torch::Tensor trainable_leaf(const torch::Tensor& view, std::int64_t per_example_rows) {
  torch::Tensor leaf = view.detach();
  if (per_example_rows > 0) {
    std::vector<std::int64_t> shape = {per_example_rows};
    shape.insert(shape.end(), view.sizes().begin(), view.sizes().end());
    leaf = leaf.unsqueeze(0).expand(shape);
  }
  return leaf.requires_grad_(true);
}

std::vector<torch::Tensor> parameter_views(const ShardedUnit& unit, const GatheredBuffers& buffers,
                                           bool as_leaves, std::int64_t per_example_rows) {
  std::vector<torch::Tensor> views =
      unit.views(buffers.trainable, buffers.frozen, buffers.quantized);
  if (as_leaves) {
    for (std::size_t i = 0; i < views.size(); ++i)
      if (unit.layout().slot(i).trainable) views[i] = trainable_leaf(views[i], per_example_rows);
  }
  return views;
}

// The rows of `input` when `unit`'s gradient is wanted per example, else 0.
std::int64_t per_example_rows(const ShardedUnit& unit, bool unit_leaves,
                              const torch::Tensor& input) {
  return unit_leaves && unit.per_example() != nullptr ? input.size(0) : 0;
}

// The same views whether the buffers were just gathered or kept since forward.
UnitParams params_of(const ShardedUnit& unit, const ShardedUnit* tied, const GatheredUnits& g,
                     bool unit_leaves, bool tied_leaves, const torch::Tensor& input) {
  // A tied unit's share of the gradient is reduced whole: per-example
  // clipping covers LoRA adapters, never a tied embedding.
  NSS_ASSERT(!(tied_leaves && unit.per_example() != nullptr), "fsdp",
             "per-example gradients of a tied unit are not supported");
  UnitParams p;
  p.unit = parameter_views(unit, g.unit, unit_leaves, per_example_rows(unit, unit_leaves, input));
  if (tied) p.tied = parameter_views(*tied, *g.tied, tied_leaves, 0);
  return p;
}

// The trainable leaves of one unit, the tensors autograd differentiates against.
std::vector<torch::Tensor> trainable_leaves(const ShardedUnit& unit,
                                            const std::vector<torch::Tensor>& views) {
  std::vector<torch::Tensor> leaves;
  for (std::size_t i = 0; i < views.size(); ++i)
    if (unit.layout().slot(i).trainable) leaves.push_back(views[i]);
  return leaves;
}

bool recomputes(const ShardedUnit& unit) {
  return unit.options().recompute != config::Recompute::kNone;
}

// Whether `unit` holds its gathered parameters from its forward to its
// backward: in its graph (no recompute) or as kept buffers.
bool keeps_parameters(const ShardedUnit& unit) {
  return !recomputes(unit) || !unit.options().reshard_after_forward;
}

// Selective recompute keeps segments' graphs for a backward that will come.
std::optional<KeptSegments> recording_for(const ShardedUnit& unit, bool backward_follows) {
  if (unit.options().recompute != config::Recompute::kSelective || !backward_follows) return {};
  return KeptSegments::recording();
}

constexpr const char* kKeptSegments = "kept_segments";

// Starts `target`'s gathers while this unit computes (ShardOptions::prefetch).
void prefetch_for(ShardedUnit* target, const char* phase) {
  if (target != nullptr && target->options().prefetch) target->prefetch(phase);
}

// In backward only for a unit that gathers again: a gather started for one
// that kept its parameters would never be taken.
void prefetch_backward(ShardedUnit* target) {
  if (target != nullptr && !keeps_parameters(*target)) prefetch_for(target, "backward");
}

torch::Tensor detached_input(const torch::Tensor& input, bool needs_grad) {
  torch::Tensor x = input.detach();
  if (needs_grad) x.requires_grad_(true);
  return x;
}

struct UnitFunction : public torch::autograd::Function<UnitFunction> {
  // `grad_enabled`: autograd recorded this call (its inputs require grad
  // and grad mode was on), so a backward may follow.
  static torch::Tensor forward(AutogradContext* ctx, torch::Tensor input, torch::Tensor master,
                               torch::Tensor tied_master, std::int64_t unit_address,
                               std::int64_t tied_address, std::int64_t compute_address,
                               bool grad_enabled) {
    auto& unit = *reinterpret_cast<ShardedUnit*>(unit_address);
    auto* tied = reinterpret_cast<ShardedUnit*>(tied_address);
    const auto& compute = *reinterpret_cast<const UnitCompute*>(compute_address);
    ctx->saved_data["unit"] = unit_address;
    ctx->saved_data["tied"] = tied_address;
    ctx->saved_data["compute"] = compute_address;

    if (recomputes(unit)) {
      ctx->save_for_backward({input});
      torch::NoGradGuard no_grad;
      const GatheredUnits gathered = gather_units(unit, tied, "forward");
      prefetch_for(unit.forward_next(), "forward");
      // Kept for the recompute; without a backward (nothing requires grad)
      // autograd drops the context, and them with it, when apply() returns.
      if (!unit.options().reshard_after_forward) keep_buffers(ctx, gathered);
      const bool backward_follows =
          grad_enabled && (input.requires_grad() || master.requires_grad() ||
                           (tied != nullptr && tied_master.requires_grad()));
      std::optional<KeptSegments> kept = recording_for(unit, backward_follows);
      torch::Tensor out = compute(input, params_of(unit, tied, gathered, false, false, input).all(),
                                  kept ? &*kept : nullptr);
      if (kept) ctx->saved_data[kKeptSegments] = kept->kept();
      return out;
    }
    // No recompute: build the unit's graph now and keep it (with the
    // gathered parameters it references) until this unit's backward.
    torch::AutoGradMode grad_mode(true);
    const UnitParams p =
        params_of(unit, tied, gather_units(unit, tied, "forward"),
                  master.requires_grad() && master.numel() > 0,
                  tied && tied_master.requires_grad() && tied_master.numel() > 0, input);
    prefetch_for(unit.forward_next(), "forward");
    torch::Tensor x = detached_input(input, input.requires_grad());
    torch::Tensor out = compute(x, p.all(), nullptr);
    ctx->saved_data["out"] = out;
    ctx->saved_data["x"] = x;
    ctx->saved_data["unit_params"] = p.unit;
    ctx->saved_data["tied_params"] = p.tied;
    return out.detach();
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    auto& unit = *reinterpret_cast<ShardedUnit*>(ctx->saved_data["unit"].toInt());
    auto* tied = reinterpret_cast<ShardedUnit*>(ctx->saved_data["tied"].toInt());
    const auto& compute = *reinterpret_cast<const UnitCompute*>(ctx->saved_data["compute"].toInt());
    const bool need_input = ctx->needs_input_grad(0);
    const bool need_unit = ctx->needs_input_grad(1);
    const bool need_tied = tied != nullptr && ctx->needs_input_grad(2);

    torch::Tensor out, x;
    UnitParams p;
    // The segments forward kept, replayed by the recompute; their nodes
    // reference it until the gradients below exist.
    std::optional<KeptSegments> kept;
    if (recomputes(unit)) {
      const torch::Tensor input = ctx->get_saved_variables()[0];
      p = params_of(unit, tied,
                    unit.options().reshard_after_forward ? gather_units(unit, tied, "backward")
                                                         : take_kept_buffers(ctx),
                    need_unit, need_tied, input);
      prefetch_backward(unit.backward_next());
      x = detached_input(input, need_input);
      if (ctx->saved_data.count(kKeptSegments) != 0) {
        kept = KeptSegments::replaying(ctx->saved_data.at(kKeptSegments).toTensorVector());
        ctx->saved_data.erase(kKeptSegments);
      }
      torch::AutoGradMode grad_mode(true);
      out = compute(x, p.all(), kept ? &*kept : nullptr);
    } else {
      out = ctx->saved_data["out"].toTensor();
      x = ctx->saved_data["x"].toTensor();
      p.unit = ctx->saved_data["unit_params"].toTensorVector();
      p.tied = ctx->saved_data["tied_params"].toTensorVector();
      ctx->saved_data.clear();  // release the graph as soon as possible
    }

    std::vector<torch::Tensor> wrt;
    if (need_input) wrt.push_back(x);
    std::vector<torch::Tensor> unit_leaves =
        need_unit ? trainable_leaves(unit, p.unit) : std::vector<torch::Tensor>();
    std::vector<torch::Tensor> tied_leaves =
        need_tied ? trainable_leaves(*tied, p.tied) : std::vector<torch::Tensor>();
    wrt.insert(wrt.end(), unit_leaves.begin(), unit_leaves.end());
    wrt.insert(wrt.end(), tied_leaves.begin(), tied_leaves.end());
    variable_list grads =
        torch::autograd::grad({out}, wrt, {grad_outputs[0]}, /*retain_graph=*/false,
                              /*create_graph=*/false, /*allow_unused=*/true);
    // The gathered parameters are no longer needed: free them (every view and
    // leaf of them) before the flat gradient buffers are allocated.
    const auto unit_count = static_cast<std::ptrdiff_t>(unit_leaves.size());
    out = torch::Tensor();
    x = torch::Tensor();
    p = UnitParams();
    wrt.clear();
    unit_leaves.clear();
    tied_leaves.clear();

    torch::Tensor grad_input = need_input ? std::move(grads[0]) : torch::Tensor();
    auto next = grads.begin() + (need_input ? 1 : 0);
    torch::Tensor grad_unit, grad_tied;
    // Moved out of `grads`, so reduce_gradient frees each parameter gradient
    // as soon as it is copied.
    if (need_unit) {
      std::vector<torch::Tensor> mine(std::make_move_iterator(next),
                                      std::make_move_iterator(next + unit_count));
      next += unit_count;
      if (unit.per_example() != nullptr)
        unit.per_example()->add(unit, std::move(mine));  // reduced after clipping
      else
        grad_unit = unit.reduce_gradient(std::move(mine));
    }
    if (need_tied) {
      std::vector<torch::Tensor> theirs(std::make_move_iterator(next),
                                        std::make_move_iterator(grads.end()));
      grad_tied = tied->reduce_gradient(std::move(theirs));
    }
    return {grad_input,      grad_unit,       grad_tied,      torch::Tensor(),
            torch::Tensor(), torch::Tensor(), torch::Tensor()};
  }
};

}  // namespace

torch::Tensor run_unit(ShardedUnit& unit, const torch::Tensor& input, const UnitCompute& compute,
                       ShardedUnit* tied) {
  const torch::Tensor tied_leaf = tied ? tied->gradient_leaf() : torch::Tensor(torch::empty({0}));
  return UnitFunction::apply(
      input, unit.gradient_leaf(), tied_leaf, reinterpret_cast<std::int64_t>(&unit),
      reinterpret_cast<std::int64_t>(tied), reinterpret_cast<std::int64_t>(&compute),
      torch::GradMode::is_enabled());
}

}  // namespace nss::fsdp
