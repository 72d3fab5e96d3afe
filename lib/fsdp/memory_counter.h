// Measured memory of the compute device: on CPU, a counting allocator
// installed as libtorch's CPU allocator tracks the live and peak bytes of
// every tensor; on GPU (issue 8) the CUDA caching allocator's statistics.
// These are the `mem_bytes` / `peak_mem_bytes` of metrics.jsonl and the
// preflight's measured peak.
#pragma once

#include <cstdint>

namespace nss::fsdp {

/// Installs the counting CPU allocator (idempotent; call before creating tensors
/// whose memory should be counted).
void install_memory_counter();

/// Bytes of live CPU tensors now.
std::int64_t tensor_bytes_now();

/// Highest tensor_bytes_now() since the last reset_peak_tensor_bytes().
std::int64_t tensor_bytes_peak();

/// Starts a new peak measurement from the current level.
void reset_peak_tensor_bytes();

/// Resident set size of this process (VmRSS), for the CPU baseline.
std::int64_t resident_bytes();

}  // namespace nss::fsdp
