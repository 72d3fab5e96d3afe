// DP-SGD's per-example clipping over FSDP units (docs/privacy.md). While a
// unit is attached (ShardedUnit::set_per_example), its backward computes the
// gradient of each example (each row of the micro-batch) with respect to its
// trainable parameters and hands them here instead of reduce-scattering their
// sum. An example's norm is global over all units, so clipping waits until
// the micro-batch's backward has passed every unit: clip() then scales each
// example's gradient by min(1, C / ||g_i||) and adds it to each unit's clipped
// sum, and reduce() turns the step's clipped sums into the masters' shard
// gradients (one reduce-scatter per unit per step).
//
// The per-example gradients are materialised ([rows, shape...] per
// parameter): for LoRA's thin adapters this costs no more than the summed
// gradient and less than the ghost-norm identity's O(T^2) per layer.
#pragma once

#include <unordered_map>
#include <vector>

#include <torch/types.h>

#include "comm/communicator.h"

namespace nss::fsdp {

class ShardedUnit;

class PerExampleGradients {
 public:
  explicit PerExampleGradients(double max_grad_norm);

  /// From `unit`'s backward: one tensor [rows, shape...] per trainable
  /// parameter, in layout order (undefined = zero).
  void add(ShardedUnit& unit, std::vector<torch::Tensor> grads);

  /// After a micro-batch's backward: clips each example's gradient (all units
  /// together) and adds it to the units' clipped sums. Returns the examples'
  /// gradient norms before clipping (fp64, [rows]; empty before any add()).
  torch::Tensor clip();

  /// At the end of the step: each unit's clipped sum, reduce-scattered (sum
  /// over ranks) into its gradient leaf's .grad. Collective: every rank passes the
  /// same units in the same order; a unit this rank saw no example for
  /// contributes zeros.
  void reduce(const std::vector<ShardedUnit*>& units);

  double max_grad_norm() const { return max_grad_norm_; }

  /// Tensor parallelism: each rank holds parts of the parameters, so an
  /// example's squared norm is summed over `group`; trainable parameter i of
  /// a unit counts its squares weights[unit][i] times (1 / the tensor ranks
  /// that hold the same values; a unit not listed counts 1).
  void sum_norms_over(comm::Communicator* group,
                      std::unordered_map<const ShardedUnit*, std::vector<double>> weights);

 private:
  struct Pending {
    ShardedUnit* unit;
    std::vector<torch::Tensor> grads;  // fp32 [rows, shape...]
  };

  double max_grad_norm_;
  comm::Communicator* norm_group_ = nullptr;  // tensor parallelism's group, or none
  std::unordered_map<const ShardedUnit*, std::vector<double>> norm_weights_;
  std::vector<Pending> pending_;  // this micro-batch's, until clip()
  torch::Tensor squared_norms_;   // fp64 [rows], over pending_
  std::unordered_map<const ShardedUnit*, std::vector<torch::Tensor>> clipped_sums_;
};

}  // namespace nss::fsdp
