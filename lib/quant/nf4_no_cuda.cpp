// nf4_cuda.h without the CUDA toolkit: nothing to run, every kernel throws.
#include "core/error.h"
#include "quant/nf4_cuda.h"

namespace nss::quant {
namespace {

[[noreturn]] void no_cuda() {
  throw InternalError("quant", "built without the CUDA toolkit",
                      "rebuild with nvcc on PATH (or CUDAToolkit_ROOT set) for the NF4 kernels");
}

}  // namespace

bool nf4_cuda_compiled() {
  return false;
}

void dequantize_nf4_cuda(const std::uint8_t*, const float*, std::int64_t, float*, void*) {
  no_cuda();
}

void dequantize_nf4_cuda_bf16(const std::uint8_t*, const float*, std::int64_t, std::uint16_t*,
                              void*) {
  no_cuda();
}

void dequantize_absmax_cuda(const std::uint8_t*, const float*, std::int64_t, float, float*, void*) {
  no_cuda();
}

}  // namespace nss::quant
