// Stub for builds without a CUDA libtorch (Debian's libtorch is CPU-only): the
// library links the same; asking for CUDA memory says how to get a GPU build.
#include "core/error.h"
#include "memory/cuda_memory.h"

namespace nss::memory {
namespace {

[[noreturn]] void no_cuda_libtorch() {
  throw UsageError("memory",
                   "CUDA memory statistics need a CUDA-enabled libtorch; this build has a "
                   "CPU-only libtorch",
                   "rebuild against a CUDA libtorch (scripts/build_torch2.sh, or cmake "
                   "-DCMAKE_PREFIX_PATH=<torch.utils.cmake_prefix_path> -DNSS_WITH_CUDA=ON; "
                   "docs/gpu.md), or run on CPU");
}

}  // namespace

bool cuda_memory_stats_available() {
  return false;
}

CudaMemoryStats cuda_memory_stats(int) {
  no_cuda_libtorch();
}

CudaDeviceMemory cuda_device_memory(int) {
  no_cuda_libtorch();
}

void reset_cuda_peak_memory(int) {
  no_cuda_libtorch();
}

void limit_cuda_memory(int, std::int64_t) {
  no_cuda_libtorch();
}

void release_cached_cuda_memory(int) {
  no_cuda_libtorch();
}

}  // namespace nss::memory
