// fused_kernels.h without the CUDA toolkit: nothing to run, every kernel throws.
#include "core/error.h"
#include "kernels/fused_kernels.h"

namespace nss::kernels {
namespace {

[[noreturn]] void no_cuda() {
  throw InternalError("kernels", "built without the CUDA toolkit",
                      "rebuild with nvcc on PATH (or CUDAToolkit_ROOT set) for the fused kernels");
}

}  // namespace

bool fused_kernels_compiled() {
  return false;
}

void rms_norm_forward(const void*, const void*, std::int64_t, std::int64_t, float, void*, float*,
                      Dtype, void*) {
  no_cuda();
}

void rms_norm_backward(const void*, const void*, const void*, const float*, std::int64_t,
                       std::int64_t, void*, void*, float*, Dtype, void*) {
  no_cuda();
}

void rope_forward(const void*, RopeStrides, const std::int64_t*, const float*, const float*,
                  std::int64_t, RopeShape, void*, RopeStrides, Dtype, void*) {
  no_cuda();
}

void rope_backward(const void*, RopeStrides, const std::int64_t*, const float*, const float*,
                   std::int64_t, RopeShape, void*, RopeStrides, Dtype, void*) {
  no_cuda();
}

void swiglu_forward(const void*, const void*, std::int64_t, void*, Dtype, void*) {
  no_cuda();
}

void swiglu_backward(const void*, const void*, const void*, std::int64_t, void*, void*, Dtype,
                     void*) {
  no_cuda();
}

}  // namespace nss::kernels
