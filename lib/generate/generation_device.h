// Where and in which element type nss_generate computes: on a CUDA device
// when libtorch sees one on any rank (each rank its node-local rank's device,
// comm::assign_device; ranks may share a GPU, since each holds a whole model
// for inference), else on the CPU. --dtype auto is bfloat16 on CUDA and
// float32 on the CPU, as training.dtype auto is.
#pragma once

#include <string>

#include <mpi.h>
#include <torch/types.h>

#include "config/choices.h"

namespace nss::generate {

/// Collective over `world`; `dtype` resolves as training.dtype does
/// (config::resolved_dtype). UsageError (exit 2) when some ranks see CUDA
/// devices and others do not.
torch::TensorOptions generation_options(config::ComputeDtype dtype, MPI_Comm world);

}  // namespace nss::generate
