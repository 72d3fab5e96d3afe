// run_with_deadline: results and exceptions come back; work that blocks in the
// kernel is abandoned at the deadline instead of hanging the caller.
#include "core/deadline.h"

#include <chrono>
#include <stdexcept>
#include <unistd.h>

#include <gtest/gtest.h>

namespace nss {
namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// A read from a pipe nobody writes to: blocks in the kernel like a stuck mount.
void block_in_kernel() {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  char byte;
  (void)::read(fds[0], &byte, 1);
}

TEST(Deadline, ReturnsTheValueOfWorkThatFinishes) {
  const auto value = call_with_deadline(5.0, [] { return 6 * 7; });
  ASSERT_TRUE(value);
  EXPECT_EQ(*value, 42);
  int side_effect = 0;
  EXPECT_TRUE(run_with_deadline(5.0, [&side_effect] { side_effect = 1; }));
  EXPECT_EQ(side_effect, 1);
}

TEST(Deadline, RethrowsWhatTheWorkThrew) {
  EXPECT_THROW(call_with_deadline(5.0, []() -> int { throw std::runtime_error("boom"); }),
               std::runtime_error);
}

TEST(Deadline, AbandonsWorkBlockedInTheKernel) {
  const int before = abandoned_threads();
  const auto start = std::chrono::steady_clock::now();
  const auto value = call_with_deadline(0.3, [] {
    block_in_kernel();
    return 1;
  });
  const double waited = seconds_since(start);
  EXPECT_FALSE(value);
  EXPECT_GE(waited, 0.3);
  EXPECT_LT(waited, 2.0);
  EXPECT_EQ(abandoned_threads(), before + 1);
}

TEST(Deadline, SlowWorkThatFinishesInTimeIsNotAbandoned) {
  const int before = abandoned_threads();
  EXPECT_TRUE(run_with_deadline(5.0, [] { ::usleep(100 * 1000); }));
  EXPECT_EQ(abandoned_threads(), before);
}

}  // namespace
}  // namespace nss
