// Measured memory of the CPU: a counting allocator installed as libtorch's
// CPU allocator tracks the live and peak bytes of every tensor, for
// metrics.jsonl's mem_bytes / peak_mem_bytes and the preflight's measured
// peak (the CUDA counterpart is cuda_memory.h). Also the process's resident
// set size, the preflight's CPU baseline.
#pragma once

#include <cstdint>

namespace nss::memory {

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

/// While alive, a CPU tensor allocation that would take tensor_bytes_now()
/// above `limit_bytes` throws std::bad_alloc instead of asking the system:
/// the preflight measures a step that may not fit without the kernel's OOM
/// killer ending the process. One limit at a time; the destructor lifts it.
class TensorByteLimit {
 public:
  explicit TensorByteLimit(std::int64_t limit_bytes);
  ~TensorByteLimit();
  TensorByteLimit(const TensorByteLimit&) = delete;
  TensorByteLimit& operator=(const TensorByteLimit&) = delete;
};

}  // namespace nss::memory
