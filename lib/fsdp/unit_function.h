// The autograd function behind ShardedUnit::apply(): all-gathers a unit's
// parameters just in time (or takes the ones kept since forward, or
// prefetched), computes on views of them, frees them, and in backward
// recomputes and differentiates against per-parameter leaves, handing the
// gradients to ShardedUnit::reduce_gradient() or, per example, to the unit's
// PerExampleGradients sink (docs/architecture.md, "FSDP", "Reshard policy").
#pragma once

#include <torch/types.h>

#include "fsdp/sharded_unit.h"

namespace nss::fsdp {

/// Runs `unit` (and its `tied` unit's parameters, or nullptr) on `input`
/// through the autograd function; connected to both units' gradient leaves.
torch::Tensor run_unit(ShardedUnit& unit, const torch::Tensor& input, const UnitCompute& compute,
                       ShardedUnit* tied);

}  // namespace nss::fsdp
