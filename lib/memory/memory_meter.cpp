#include "memory/memory_meter.h"

#include <string>

#include "core/error.h"
#include "memory/cuda_memory.h"
#include "memory/memory_counter.h"

namespace nss::memory {
namespace {

class CpuMemoryMeter final : public MemoryMeter {
 public:
  CpuMemoryMeter() { install_memory_counter(); }
  torch::Device torch_device() const override { return torch::kCPU; }
  std::int64_t bytes_now() const override { return tensor_bytes_now(); }
  std::int64_t peak_bytes() const override { return tensor_bytes_peak(); }
  void reset_peak() override { reset_peak_tensor_bytes(); }
  void set_limit(std::int64_t limit_bytes) override {
    limit_ = std::make_unique<TensorByteLimit>(limit_bytes);
  }
  void clear_limit() override { limit_.reset(); }
  void release_cached() override {}  // the counting allocator keeps no blocks of its own

 private:
  std::unique_ptr<TensorByteLimit> limit_;
};

class CudaMemoryMeter final : public MemoryMeter {
 public:
  explicit CudaMemoryMeter(int device_index) : device_index_(device_index) {
    cuda_memory_stats(device_index_);  // UsageError now, not mid-measurement
  }
  torch::Device torch_device() const override {
    return {torch::kCUDA, static_cast<c10::DeviceIndex>(device_index_)};
  }
  std::int64_t bytes_now() const override {
    return cuda_memory_stats(device_index_).allocated_bytes;
  }
  std::int64_t peak_bytes() const override {
    return cuda_memory_stats(device_index_).peak_allocated_bytes;
  }
  void reset_peak() override { reset_cuda_peak_memory(device_index_); }
  // Cached free blocks would serve allocations past the cap: hand them back first.
  void set_limit(std::int64_t limit_bytes) override {
    release_cached_cuda_memory(device_index_);
    limit_cuda_memory(device_index_, limit_bytes);
  }
  void clear_limit() override { limit_cuda_memory(device_index_, 0); }
  void release_cached() override {
    try {
      release_cached_cuda_memory(device_index_);
    } catch (const Error&) {
      // The constructor proved the device readable; nothing left to report.
    }
  }
  bool counts_workspaces_apart() const override { return true; }

 private:
  int device_index_;
};

}  // namespace

std::unique_ptr<MemoryMeter> make_memory_meter(const torch::Device& device) {
  if (device.is_cpu()) return std::make_unique<CpuMemoryMeter>();
  if (device.is_cuda())
    return std::make_unique<CudaMemoryMeter>(device.has_index() ? device.index() : 0);
  throw InternalError("memory", "no memory statistics for device " + device.str());
}

}  // namespace nss::memory
