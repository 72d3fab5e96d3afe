// AdamW's moment and parameter update in one pass over fp32 device arrays
// (CUDA): reads parameter, gradient and both moments once and writes them once
// (28 bytes per element) where the generic libtorch path runs six kernels and
// two temporaries (about 72). Same arithmetic as torch.optim.AdamW's
// single-tensor path in fp32; decoupled weight decay stays with the caller.
// Built only with a CUDA libtorch (NSS_HAVE_CUDA); no libtorch here.
#pragma once

#include <cstdint>

namespace nss::optim {

struct FusedAdamWScalars {
  float beta1;                  // exp_avg = exp_avg + (1 - beta1) * (grad - exp_avg)
  float beta2;                  // exp_avg_sq = exp_avg_sq * beta2 + (1 - beta2) * grad^2
  float step_size;              // lr / bias_correction1
  float bias_correction2_sqrt;  // sqrt(1 - beta2^step)
  float eps;
};

/// Enqueues the update of `count` elements on `stream` (a cudaStream_t);
/// throws InternalError when the launch fails.
void fused_adamw_update(float* param, const float* grad, float* exp_avg, float* exp_avg_sq,
                        std::int64_t count, const FusedAdamWScalars& scalars, void* stream);

}  // namespace nss::optim
