#include "core/heap_tuning.h"

#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <malloc.h>

namespace nss {
namespace {

constexpr int kMmapThreshold = 32 << 20;  // glibc's maximum on 64-bit
constexpr int kTrimThreshold = 1 << 30;
constexpr int kTopPad = 64 << 20;

bool user_tuned_malloc() {
  for (const char* name :
       {"MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_", "MALLOC_MMAP_MAX_"})
    if (std::getenv(name) != nullptr) return true;
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  return tunables != nullptr && std::strstr(tunables, "glibc.malloc.") != nullptr;
}

}  // namespace

bool keep_freed_memory_for_reuse() {
  if (user_tuned_malloc()) return false;
  // mallopt returns 1 on success; each setting also turns off glibc's
  // dynamic adjustment of the thresholds.
  return mallopt(M_MMAP_THRESHOLD, kMmapThreshold) == 1 &&
         mallopt(M_TRIM_THRESHOLD, kTrimThreshold) == 1 && mallopt(M_TOP_PAD, kTopPad) == 1;
}

}  // namespace nss
