#include "fsdp/kept_segments.h"

#include <string>
#include <utility>

#include <torch/torch.h>

#include "core/error.h"

namespace nss::fsdp {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// One kept segment: the leaves its graph was built on and its output.
struct KeptSegment {
  std::vector<torch::Tensor> leaves;
  torch::Tensor output;
};

// The kept output in the recompute's graph: its inputs are the recomputed
// ones, its backward differentiates the kept graph against the leaves that
// stood for them.
struct KeptSegmentFunction : public torch::autograd::Function<KeptSegmentFunction> {
  static torch::Tensor forward(AutogradContext* ctx, const at::TensorList& inputs,
                               std::int64_t segment_address) {
    auto& segment = *reinterpret_cast<KeptSegment*>(segment_address);
    NSS_ASSERT(segment.leaves.size() == inputs.size(), "fsdp",
               "a kept segment was recorded with " + std::to_string(segment.leaves.size()) +
                   " inputs and replayed with " + std::to_string(inputs.size()));
    ctx->saved_data["leaves"] = segment.leaves;
    ctx->saved_data["output"] = segment.output;
    return segment.output.detach();
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const std::vector<torch::Tensor> leaves = ctx->saved_data.at("leaves").toTensorVector();
    const torch::Tensor output = ctx->saved_data.at("output").toTensor();
    ctx->saved_data.clear();
    std::vector<torch::Tensor> wanted;
    for (std::size_t i = 0; i < leaves.size(); ++i)
      if (ctx->needs_input_grad(i)) wanted.push_back(leaves[i]);
    variable_list grads(leaves.size() + 1);  // the inputs' and the address's (none)
    // An output that depends on no leaf (attention over padding alone) passes no gradient.
    if (wanted.empty() || !output.requires_grad()) return grads;
    variable_list computed =
        torch::autograd::grad({output}, wanted, {grad_outputs[0]}, /*retain_graph=*/false,
                              /*create_graph=*/false, /*allow_unused=*/true);
    for (std::size_t i = 0, next = 0; i < leaves.size(); ++i)
      if (ctx->needs_input_grad(i)) grads[i] = std::move(computed[next++]);
    return grads;
  }
};

}  // namespace

KeptSegments::KeptSegments(Phase phase, std::vector<torch::Tensor> kept)
    : phase_(phase), kept_(std::move(kept)) {}

KeptSegments KeptSegments::recording() {
  return KeptSegments(Phase::kRecording, {});
}

KeptSegments KeptSegments::replaying(std::vector<torch::Tensor> kept) {
  return KeptSegments(Phase::kReplaying, std::move(kept));
}

torch::Tensor KeptSegments::run(const std::vector<torch::Tensor>& inputs, const Segment& segment) {
  if (phase_ == Phase::kRecording) {
    std::vector<torch::Tensor> leaves;
    for (const torch::Tensor& input : inputs)
      leaves.push_back(input.detach().requires_grad_(input.is_floating_point()));
    torch::Tensor output;
    {
      torch::AutoGradMode grad_mode(true);
      output = segment(leaves);
    }
    kept_.insert(kept_.end(), leaves.begin(), leaves.end());
    kept_.push_back(output);
    return output.detach();
  }
  const std::size_t end = next_ + inputs.size() + 1;
  NSS_ASSERT(end <= kept_.size(), "fsdp",
             "a recompute replays more kept segments than its forward recorded");
  KeptSegment kept;
  for (std::size_t i = next_; i + 1 < end; ++i) kept.leaves.push_back(std::move(kept_[i]));
  kept.output = std::move(kept_[end - 1]);
  next_ = end;
  // From here on the node holds the kept graph, and frees it in its backward.
  return KeptSegmentFunction::apply(at::TensorList(inputs), reinterpret_cast<std::int64_t>(&kept));
}

torch::Tensor run_segment(KeptSegments* kept, const std::vector<torch::Tensor>& inputs,
                          const Segment& segment) {
  return kept != nullptr ? kept->run(inputs, segment) : segment(inputs);
}

}  // namespace nss::fsdp
