#include "core/heap_tuning.h"

#include <cstring>
#include <malloc.h>
#include <stdlib.h>

#include <gtest/gtest.h>

namespace nss {
namespace {

constexpr std::size_t kBlock = 8 << 20;  // above glibc's default mmap threshold

TEST(HeapTuning, LargeBlocksComeFromTheHeapAndStayThere) {
  ASSERT_TRUE(keep_freed_memory_for_reuse());
  const std::size_t mapped_before = mallinfo2().hblkhd;
  auto* block = static_cast<char*>(std::malloc(kBlock));
  ASSERT_NE(block, nullptr);
  std::memset(block, 1, kBlock);
  EXPECT_EQ(mallinfo2().hblkhd, mapped_before) << "an 8 MiB block was still served by mmap";
  std::free(block);
  EXPECT_GE(mallinfo2().arena, kBlock) << "the heap was trimmed after the free";
}

TEST(HeapTuning, LeavesAUserTunedHeapAlone) {
  ASSERT_EQ(setenv("GLIBC_TUNABLES", "glibc.malloc.trim_threshold=0", 1), 0);
  EXPECT_FALSE(keep_freed_memory_for_reuse());
  ASSERT_EQ(unsetenv("GLIBC_TUNABLES"), 0);
  ASSERT_EQ(setenv("MALLOC_TOP_PAD_", "0", 1), 0);
  EXPECT_FALSE(keep_freed_memory_for_reuse());
  ASSERT_EQ(unsetenv("MALLOC_TOP_PAD_"), 0);
}

}  // namespace
}  // namespace nss
