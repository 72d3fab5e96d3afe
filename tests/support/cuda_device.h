// For the tests of lib/'s CUDA kernels (compiled only when NSS_CUDA_KERNELS):
// whether a CUDA device is usable, else why the test skips.
#pragma once

#include <string>

#include <cuda_runtime.h>
#include <gtest/gtest.h>

namespace nss::testing {

/// Empty when a device is usable, else the reason to skip.
inline std::string no_cuda_device_reason() {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess)
    return std::string("no usable CUDA device: cudaGetDeviceCount: ") + cudaGetErrorString(err);
  if (count == 0) return "no CUDA device";
  return {};
}

}  // namespace nss::testing

#define SKIP_WITHOUT_CUDA_DEVICE()                                      \
  do {                                                                  \
    const std::string reason = ::nss::testing::no_cuda_device_reason(); \
    if (!reason.empty()) GTEST_SKIP() << reason;                        \
  } while (0)
