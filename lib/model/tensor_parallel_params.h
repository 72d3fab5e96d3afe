// Where each parameter of the model (param_spec.h) sits on the tensor ranks:
// the placement arch/tensor_parallel.h plans for its tensor, a LoRA factor
// following its layer. Plain C++: the unit layouts, the preflight and the
// checkpoints read the same placements.
#pragma once

#include "arch/tensor_parallel.h"
#include "model/param_spec.h"

namespace nss::model {

/// The placement of `spec`, a parameter of unit_parameters() of the model
/// `plan` was made for; InternalError for a name the model does not have.
arch::TensorPlacement parameter_placement(const arch::TensorParallelPlan& plan,
                                          const ParamSpec& spec);

}  // namespace nss::model
