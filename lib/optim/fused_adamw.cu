#include <algorithm>
#include <string>

#include <cuda_runtime_api.h>

#include "core/error.h"
#include "optim/fused_adamw.h"

namespace nss::optim {
namespace {

// Grid-stride loop, one element per thread per iteration; the operations and
// their order are those of torch's lerp_, mul_/addcmul_, sqrt/div/add_ and
// addcdiv_ on float tensors.
__global__ void adamw_update_kernel(float* __restrict__ param, const float* __restrict__ grad,
                                    float* __restrict__ exp_avg, float* __restrict__ exp_avg_sq,
                                    std::int64_t count, FusedAdamWScalars s) {
  const float weight1 = 1.0f - s.beta1;
  const float weight2 = 1.0f - s.beta2;
  const std::int64_t stride = static_cast<std::int64_t>(blockDim.x) * gridDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    const float g = grad[i];
    const float m = exp_avg[i] + weight1 * (g - exp_avg[i]);
    const float v = exp_avg_sq[i] * s.beta2 + weight2 * g * g;
    const float denom = sqrtf(v) / s.bias_correction2_sqrt + s.eps;
    exp_avg[i] = m;
    exp_avg_sq[i] = v;
    param[i] = param[i] + -s.step_size * (m / denom);
  }
}

}  // namespace

void fused_adamw_update(float* param, const float* grad, float* exp_avg, float* exp_avg_sq,
                        std::int64_t count, const FusedAdamWScalars& scalars, void* stream) {
  if (count <= 0) return;
  constexpr int kThreads = 256;
  // Enough blocks to fill any current GPU several times over; the loop covers the rest.
  const auto blocks =
      static_cast<int>(std::min<std::int64_t>((count + kThreads - 1) / kThreads, 65536));
  adamw_update_kernel<<<blocks, kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
      param, grad, exp_avg, exp_avg_sq, count, scalars);
  const cudaError_t rc = cudaGetLastError();
  if (rc != cudaSuccess)
    throw InternalError(
        "optim", std::string("the fused AdamW kernel did not launch: ") + cudaGetErrorString(rc));
}

}  // namespace nss::optim
