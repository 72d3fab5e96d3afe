#include "memory/memory_counter.h"

#include <atomic>
#include <fstream>
#include <mutex>
#include <new>
#include <string>
#include <unordered_map>

#include <c10/core/CPUAllocator.h>
#include <torch/version.h>

#include "core/error.h"

namespace nss::memory {
namespace {

std::atomic<std::int64_t> g_now{0};
std::atomic<std::int64_t> g_peak{0};
std::atomic<std::int64_t> g_limit{0};  // 0: no limit

void add(std::int64_t bytes) {
  const std::int64_t now = g_now.fetch_add(bytes) + bytes;
  std::int64_t peak = g_peak.load();
  while (now > peak && !g_peak.compare_exchange_weak(peak, now)) {
  }
}

// Wraps the default allocator. The data pointer is also the context (libtorch's
// raw_allocate, used by oneDNN's bf16 kernels among others, requires it), so
// the size and the inner allocation live in a table keyed by that pointer.
class CountingAllocator final : public c10::Allocator {
 public:
  explicit CountingAllocator(c10::Allocator* inner) : inner_(inner) {}

#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 3)
  c10::DataPtr allocate(size_t bytes) override {
    return wrap(bytes);
  }
  void copy_data(void* dest, const void* src, std::size_t count) const override {
    default_copy_data(dest, src, count);
  }
#else
  c10::DataPtr allocate(size_t bytes) const override {
    return wrap(bytes);
  }
#endif
  c10::DeleterFnPtr raw_deleter() const override {
    return &release;
  }

 private:
  struct Allocation {
    c10::DataPtr inner;
    std::int64_t bytes;
  };

  static std::mutex& table_mutex() {
    static std::mutex mutex;
    return mutex;
  }
  static std::unordered_map<void*, Allocation>& table() {
    static auto* allocations = new std::unordered_map<void*, Allocation>();  // outlives exit
    return *allocations;
  }

  static void release(void* data) {
    Allocation allocation;
    {
      std::lock_guard<std::mutex> lock(table_mutex());
      auto it = table().find(data);
      allocation = std::move(it->second);
      table().erase(it);
    }
    g_now.fetch_sub(allocation.bytes);
  }  // the inner allocation is freed here, outside the lock

  c10::DataPtr wrap(size_t bytes) const {
    if (bytes == 0) return inner_->allocate(0);  // nothing to count; may share a null pointer
    const std::int64_t limit = g_limit.load();
    if (limit > 0 && g_now.load() + static_cast<std::int64_t>(bytes) > limit)
      throw std::bad_alloc();
    c10::DataPtr inner = inner_->allocate(bytes);
    void* data = inner.get();
    const c10::Device device = inner.device();
    {
      std::lock_guard<std::mutex> lock(table_mutex());
      table().emplace(data, Allocation{std::move(inner), static_cast<std::int64_t>(bytes)});
    }
    add(static_cast<std::int64_t>(bytes));
    return {data, data, &release, device};
  }

  c10::Allocator* inner_;
};

}  // namespace

void install_memory_counter() {
  static std::once_flag once;
  std::call_once(once, [] {
    static CountingAllocator counting(c10::GetDefaultCPUAllocator());
    c10::SetCPUAllocator(&counting, /*priority=*/1);
  });
}

std::int64_t tensor_bytes_now() {
  return g_now.load();
}
std::int64_t tensor_bytes_peak() {
  return g_peak.load();
}
void reset_peak_tensor_bytes() {
  g_peak.store(g_now.load());
}

TensorByteLimit::TensorByteLimit(std::int64_t limit_bytes) {
  NSS_ASSERT(limit_bytes > 0, "memory", "a tensor byte limit must be positive");
  std::int64_t none = 0;
  NSS_ASSERT(g_limit.compare_exchange_strong(none, limit_bytes), "memory",
             "a TensorByteLimit is already active");
}

TensorByteLimit::~TensorByteLimit() {
  g_limit.store(0);
}

std::int64_t resident_bytes() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stoll(line.substr(6)) * 1024;
  }
  return 0;
}

}  // namespace nss::memory
