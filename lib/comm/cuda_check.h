// NSS_CUDA_CHECK / NSS_NCCL_CHECK: throw InternalError "[comm] call failed:
// <library text> (file:line)". Only for files compiled with the CUDA toolkit.
#pragma once

#include <string>

#include <cuda_runtime_api.h>
#include <nccl.h>

#include "core/error.h"

#define NSS_CUDA_CHECK(call)                                                                  \
  do {                                                                                        \
    const cudaError_t nss_cuda_rc = (call);                                                   \
    if (nss_cuda_rc != cudaSuccess)                                                           \
      throw ::nss::InternalError(                                                             \
          "comm", std::string(#call) + " failed: " + cudaGetErrorString(nss_cuda_rc) + " (" + \
                      ::nss::source_location(__FILE__, __LINE__) + ")");                      \
  } while (0)

#define NSS_NCCL_CHECK(call)                                                                \
  do {                                                                                      \
    const ncclResult_t nss_nccl_rc = (call);                                                \
    if (nss_nccl_rc != ncclSuccess)                                                         \
      throw ::nss::InternalError("comm",                                                    \
                                 std::string(#call) +                                       \
                                     " failed: " + ncclGetErrorString(nss_nccl_rc) + " (" + \
                                     ::nss::source_location(__FILE__, __LINE__) + ")",      \
                                 "set NCCL_DEBUG=INFO for NCCL's own diagnostics");         \
  } while (0)
