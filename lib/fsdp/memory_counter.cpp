#include "fsdp/memory_counter.h"

#include <c10/core/CPUAllocator.h>
#include <torch/version.h>

#include <atomic>
#include <fstream>
#include <mutex>
#include <string>

namespace nss::fsdp {
namespace {

std::atomic<std::int64_t> g_now{0};
std::atomic<std::int64_t> g_peak{0};

void add(std::int64_t bytes) {
  const std::int64_t now = g_now.fetch_add(bytes) + bytes;
  std::int64_t peak = g_peak.load();
  while (now > peak && !g_peak.compare_exchange_weak(peak, now)) {
  }
}

// Wraps the default allocator: every allocation carries a small context that
// remembers its size and owns the inner allocation.
class CountingAllocator final : public c10::Allocator {
 public:
  explicit CountingAllocator(c10::Allocator* inner) : inner_(inner) {}

#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 3)
  c10::DataPtr allocate(size_t bytes) override { return wrap(bytes); }
  void copy_data(void* dest, const void* src, std::size_t count) const override {
    default_copy_data(dest, src, count);
  }
#else
  c10::DataPtr allocate(size_t bytes) const override { return wrap(bytes); }
#endif

 private:
  struct Context {
    c10::DataPtr inner;
    std::int64_t bytes;
  };

  static void release(void* context) {
    auto* ctx = static_cast<Context*>(context);
    g_now.fetch_sub(ctx->bytes);
    delete ctx;  // frees the inner allocation
  }

  c10::DataPtr wrap(size_t bytes) const {
    c10::DataPtr inner = inner_->allocate(bytes);
    void* data = inner.get();
    const c10::Device device = inner.device();
    auto* ctx = new Context{std::move(inner), static_cast<std::int64_t>(bytes)};
    add(ctx->bytes);
    return {data, ctx, &release, device};
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

std::int64_t tensor_bytes_now() { return g_now.load(); }
std::int64_t tensor_bytes_peak() { return g_peak.load(); }
void reset_peak_tensor_bytes() { g_peak.store(g_now.load()); }

std::int64_t resident_bytes() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stoll(line.substr(6)) * 1024;
  }
  return 0;
}

}  // namespace nss::fsdp
