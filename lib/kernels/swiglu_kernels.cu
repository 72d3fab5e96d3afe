// SwiGLU kernels of fused_kernels.h (helpers in kernel_support.cuh):
// grid-stride over packs, then the tail element by element.
#include <cstdint>
#include <string>

#include <cuda_runtime.h>

#include "kernels/fused_kernels.h"
#include "kernels/kernel_support.cuh"

namespace nss::kernels {
namespace {

// libtorch's CPU silu: x / (1 + exp(-x)).
__device__ __forceinline__ float silu(float x) {
  return x / (1.0f + expf(-x));
}

template <typename T>
__device__ __forceinline__ T swiglu_value(T gate, T up) {
  return from_float<T>(round_to<T>(silu(to_float(gate))) * to_float(up));
}

// libtorch's silu_backward: dy * sigmoid * (1 + x * (1 - sigmoid)), with
// dy = grad_out * up in T; grad_up = grad_out * silu(gate) in T.
template <typename T>
__device__ __forceinline__ void swiglu_grads(T g, T gate, T up, T& grad_gate, T& grad_up) {
  const float x = to_float(gate);
  const float sigmoid = 1.0f / (1.0f + expf(-x));
  const float dy = round_to<T>(to_float(g) * to_float(up));
  grad_gate = from_float<T>(dy * sigmoid * (1.0f + x * (1.0f - sigmoid)));
  grad_up = from_float<T>(to_float(g) * round_to<T>(silu(x)));
}

template <typename T, int V>
__global__ void __launch_bounds__(kThreads)
    swiglu_forward_kernel(const T* __restrict__ gate, const T* __restrict__ up, std::int64_t n,
                          T* __restrict__ out) {
  const std::int64_t packs = n / V;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  const std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (std::int64_t p = first; p < packs; p += stride) {
    const Pack<T, V> gv = load<T, V>(gate + p * V);
    const Pack<T, V> uv = load<T, V>(up + p * V);
    Pack<T, V> o;
#pragma unroll
    for (int j = 0; j < V; ++j) o.v[j] = swiglu_value(gv.v[j], uv.v[j]);
    store<T, V>(out + p * V, o);
  }
  for (std::int64_t i = packs * V + first; i < n; i += stride)
    out[i] = swiglu_value(gate[i], up[i]);
}

template <typename T, int V>
__global__ void __launch_bounds__(kThreads)
    swiglu_backward_kernel(const T* __restrict__ grad_out, const T* __restrict__ gate,
                           const T* __restrict__ up, std::int64_t n, T* __restrict__ grad_gate,
                           T* __restrict__ grad_up) {
  const std::int64_t packs = n / V;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  const std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (std::int64_t p = first; p < packs; p += stride) {
    const Pack<T, V> gv = load<T, V>(grad_out + p * V);
    const Pack<T, V> xv = load<T, V>(gate + p * V);
    const Pack<T, V> uv = load<T, V>(up + p * V);
    Pack<T, V> dg, du;
#pragma unroll
    for (int j = 0; j < V; ++j) swiglu_grads(gv.v[j], xv.v[j], uv.v[j], dg.v[j], du.v[j]);
    store<T, V>(grad_gate + p * V, dg);
    store<T, V>(grad_up + p * V, du);
  }
  for (std::int64_t i = packs * V + first; i < n; i += stride)
    swiglu_grads(grad_out[i], gate[i], up[i], grad_gate[i], grad_up[i]);
}

// --- Host side -----------------------------------------------------------------

template <typename T>
void launch_swiglu_forward(const void* gate, const void* up, std::int64_t n, void* out,
                           void* stream) {
  constexpr int V = kVec<T>;
  const auto* gt = static_cast<const T*>(gate);
  const auto* ut = static_cast<const T*>(up);
  auto* ot = static_cast<T*>(out);
  const bool packed = aligned16(gate) && aligned16(up) && aligned16(out);
  const std::int64_t items = packed ? n / V + n % V : n;
  const unsigned grid = grid_for((items + kThreads - 1) / kThreads);
  if (packed)
    swiglu_forward_kernel<T, V><<<grid, kThreads, 0, as_stream(stream)>>>(gt, ut, n, ot);
  else
    swiglu_forward_kernel<T, 1><<<grid, kThreads, 0, as_stream(stream)>>>(gt, ut, n, ot);
  check_launch("SwiGLU forward");
}

template <typename T>
void launch_swiglu_backward(const void* grad_out, const void* gate, const void* up, std::int64_t n,
                            void* grad_gate, void* grad_up, void* stream) {
  constexpr int V = kVec<T>;
  const auto* gt = static_cast<const T*>(grad_out);
  const auto* xt = static_cast<const T*>(gate);
  const auto* ut = static_cast<const T*>(up);
  auto* dgt = static_cast<T*>(grad_gate);
  auto* dut = static_cast<T*>(grad_up);
  const bool packed = aligned16(grad_out) && aligned16(gate) && aligned16(up) &&
                      aligned16(grad_gate) && aligned16(grad_up);
  const std::int64_t items = packed ? n / V + n % V : n;
  const unsigned grid = grid_for((items + kThreads - 1) / kThreads);
  if (packed)
    swiglu_backward_kernel<T, V><<<grid, kThreads, 0, as_stream(stream)>>>(gt, xt, ut, n, dgt, dut);
  else
    swiglu_backward_kernel<T, 1><<<grid, kThreads, 0, as_stream(stream)>>>(gt, xt, ut, n, dgt, dut);
  check_launch("SwiGLU backward");
}

}  // namespace

void swiglu_forward(const void* gate, const void* up, std::int64_t n, void* out, Dtype dtype,
                    void* stream) {
  require(n >= 0, "swiglu_forward", "negative length " + std::to_string(n));
  if (n == 0) return;
  if (dtype == Dtype::kFloat32)
    launch_swiglu_forward<float>(gate, up, n, out, stream);
  else
    launch_swiglu_forward<std::uint16_t>(gate, up, n, out, stream);
}

void swiglu_backward(const void* grad_out, const void* gate, const void* up, std::int64_t n,
                     void* grad_gate, void* grad_up, Dtype dtype, void* stream) {
  require(n >= 0, "swiglu_backward", "negative length " + std::to_string(n));
  if (n == 0) return;
  if (dtype == Dtype::kFloat32)
    launch_swiglu_backward<float>(grad_out, gate, up, n, grad_gate, grad_up, stream);
  else
    launch_swiglu_backward<std::uint16_t>(grad_out, gate, up, n, grad_gate, grad_up, stream);
}

}  // namespace nss::kernels
