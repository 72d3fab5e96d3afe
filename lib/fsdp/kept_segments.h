// Selective activation checkpointing (training.activation_checkpointing:
// selective): a unit's compute marks segments worth keeping from forward —
// a decoder block's attention, costly to run again and cheap to hold — and
// the backward's recompute takes their kept results instead of running them.
//
// In forward (no graph for the rest of the unit) a segment is differentiated
// on detached copies of its inputs and that small graph is kept; in the
// recompute the segment's output is the kept one, joined to the recomputed
// inputs by an autograd node whose backward runs the kept graph. The
// gradients are those of a full recompute, bit for bit (the same operations
// on the same values), while the segment's forward runs once.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include <torch/types.h>

namespace nss::fsdp {

/// A part of a unit's compute: tensors in, one tensor out.
using Segment = std::function<torch::Tensor(const std::vector<torch::Tensor>& inputs)>;

class KeptSegments {
 public:
  /// For a unit's forward: run() keeps each segment's graph.
  static KeptSegments recording();
  /// For the unit's recompute, from the tensors a recording's kept() gave:
  /// run() returns the kept outputs, in the order they were recorded.
  static KeptSegments replaying(std::vector<torch::Tensor> kept);

  /// `segment(inputs)`, kept (recording) or taken from what was kept (replaying).
  torch::Tensor run(const std::vector<torch::Tensor>& inputs, const Segment& segment);

  /// What a recording holds for the backward: per segment its input leaves,
  /// then its output (whose graph keeps what the segment's backward reads).
  std::vector<torch::Tensor> kept() const { return kept_; }

 private:
  enum class Phase { kRecording, kReplaying };
  KeptSegments(Phase phase, std::vector<torch::Tensor> kept);

  Phase phase_;
  std::vector<torch::Tensor> kept_;
  std::size_t next_ = 0;  // replaying: the first tensor of the next segment
};

/// `segment(inputs)`, through `kept` when the unit recomputes selectively
/// (nullptr: run it as it is).
torch::Tensor run_segment(KeptSegments* kept, const std::vector<torch::Tensor>& inputs,
                          const Segment& segment);

}  // namespace nss::fsdp
