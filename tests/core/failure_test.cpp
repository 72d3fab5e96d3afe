#include "core/failure.h"

#include <new>
#include <stdexcept>

#include <gtest/gtest.h>

namespace nss {
namespace {

template <class E>
Failure classified(E error) {
  return classify(std::make_exception_ptr(std::move(error)));
}

TEST(Failure, AnErrorKeepsItsCodeAndParts) {
  const Failure f = classified(DataError("data", "file X is short", "prepare more"));
  EXPECT_EQ(f.code, ExitCode::kData);
  EXPECT_EQ(f.component, "data");
  EXPECT_EQ(f.message, "file X is short");
  EXPECT_EQ(f.hint, "prepare more");
  EXPECT_FALSE(f.out_of_memory);
  EXPECT_EQ(f.text(), DataError("data", "file X is short", "prepare more").what());
}

TEST(Failure, AFailedAllocationIsExitThreeWithOneHint) {
  const Failure host = classified(std::bad_alloc());
  EXPECT_EQ(host.code, ExitCode::kResources);
  EXPECT_TRUE(host.out_of_memory);
  EXPECT_EQ(host.message, "out of host memory");
  EXPECT_NE(host.hint.find("micro_batch_size"), std::string::npos);
  // libtorch's allocators say so in their c10::Error text.
  for (const char* what : {"CUDA out of memory. Tried to allocate 2.00 GiB",
                           "[enforce fail at alloc_cpu.cpp:75] DefaultCPUAllocator: not enough "
                           "memory: you tried to allocate 123",
                           "[enforce fail at alloc_cpu.cpp:75] err == 0. DefaultCPUAllocator: "
                           "can't allocate memory: you tried to allocate 8329887744 bytes"}) {
    const Failure device = classified(std::runtime_error(what));
    EXPECT_EQ(device.code, ExitCode::kResources) << what;
    EXPECT_TRUE(device.out_of_memory);
    EXPECT_EQ(device.message, what);
    EXPECT_EQ(device.hint, host.hint);
  }
}

TEST(Failure, AnythingElseIsInternal) {
  const Failure library = classified(std::runtime_error("H5Fopen exploded"));
  EXPECT_EQ(library.code, ExitCode::kInternal);
  EXPECT_EQ(library.text().rfind("[internal] H5Fopen exploded", 0), 0u);
  EXPECT_FALSE(library.out_of_memory);
  EXPECT_TRUE(library.unexpected);
  EXPECT_FALSE(classified(InternalError("fsdp", "bad layout")).unexpected);
  EXPECT_EQ(classified(42).code, ExitCode::kInternal);
  EXPECT_EQ(classify(nullptr).code, ExitCode::kOk);
}

}  // namespace
}  // namespace nss
