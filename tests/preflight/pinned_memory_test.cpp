// The pinned-memory check of optimizer-state offload with injected limits:
// the node's usable memory (from the cgroup fixtures through
// read_host_memory, or set by hand) and RLIMIT_MEMLOCK.
#include "preflight/pinned_memory.h"

#include <limits>
#include <sys/resource.h>

#include <gtest/gtest.h>

#include "support/test_paths.h"

namespace nss::preflight {
namespace {

constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;
constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;

HostMemory usable(std::uint64_t bytes) {
  HostMemory memory;
  memory.usable_bytes = bytes;
  memory.bound_by = "MemAvailable";
  memory.limits.push_back({"MemAvailable", bytes, "/proc/meminfo MemAvailable"});
  return memory;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

PinnedMemoryInput input(std::uint64_t elements, int ranks, HostMemory node) {
  PinnedMemoryInput in;
  in.shard_elements = elements;
  in.ranks_on_node = ranks;
  in.node = std::move(node);
  return in;
}

TEST(PinnedMemory, PassesWithRoomAndNoLockedMemoryLimit) {
  // 4 ranks x 12 B x 2^27 elements = 6 GiB of 64 GiB.
  const auto v = check_pinned_memory(input(std::uint64_t{1} << 27, 4, usable(64 * kGiB)));
  EXPECT_EQ(v.status, CheckStatus::kPass) << v.finding;
  EXPECT_EQ(v.pinned_bytes_per_rank, 12 * (std::uint64_t{1} << 27));
  EXPECT_EQ(v.pinned_bytes_on_node, 6 * kGiB);
  EXPECT_TRUE(contains(v.finding, "4 ranks on the node")) << v.finding;
  EXPECT_TRUE(contains(v.finding, "9.4% of the node's usable 64.00 GiB")) << v.finding;
  EXPECT_TRUE(contains(v.finding, "RLIMIT_MEMLOCK unlimited")) << v.finding;
  EXPECT_TRUE(v.fix.empty());
}

TEST(PinnedMemory, TheNodeSharesItsMemoryBetweenItsRanks) {
  // 1.5 GiB per rank: 8 ranks use 12 GiB of 20 (60%: warn), 12 ranks 18 GiB (90%: fail).
  const std::uint64_t elements = 128 * kMiB;
  const auto warn = check_pinned_memory(input(elements, 8, usable(20 * kGiB)));
  EXPECT_EQ(warn.status, CheckStatus::kWarn) << warn.finding;
  EXPECT_TRUE(contains(warn.finding, "above preflight.host_memory_warn_fraction 50.0%"));
  EXPECT_TRUE(contains(warn.fix, "fewer ranks per node")) << warn.fix;
  const auto fail = check_pinned_memory(input(elements, 12, usable(20 * kGiB)));
  EXPECT_EQ(fail.status, CheckStatus::kFail) << fail.finding;
  EXPECT_TRUE(contains(fail.finding, "above preflight.host_memory_fail_fraction 80.0%"));
  EXPECT_TRUE(contains(fail.fix, "parallel.offload_optimizer: false")) << fail.fix;
}

TEST(PinnedMemory, TheCheckpointMirrorCounts) {
  PinnedMemoryInput in = input(kMiB, 1, usable(100 * kMiB));  // 12 MiB: pass
  EXPECT_EQ(check_pinned_memory(in).status, CheckStatus::kPass);
  in.checkpoint_mirror_bytes = 60 * kMiB;  // 72 MiB of 100: warn
  const auto v = check_pinned_memory(in);
  EXPECT_EQ(v.status, CheckStatus::kWarn);
  EXPECT_EQ(v.pinned_bytes_per_rank, 72 * kMiB);
  EXPECT_TRUE(contains(v.finding, "60.00 MiB pinned checkpoint mirror")) << v.finding;
}

TEST(PinnedMemory, TheFractionsComeFromTheCaller) {
  PinnedMemoryInput in = input(kMiB, 1, usable(100 * kMiB));  // 12%
  in.warn_fraction = 0.05;
  in.fail_fraction = 0.1;
  EXPECT_EQ(check_pinned_memory(in).status, CheckStatus::kFail);
}

TEST(PinnedMemory, NodeLimitFromTheCgroupFixture) {
  // cgroup_v2_nested leaves 4.5 GiB to the job step (host_memory_test.cpp):
  // 2 ranks x 12 B x 2^27 = 3 GiB is 66.7% of it.
  const HostMemory node = read_host_memory(
      {nss::testing::source_dir() + "/tests/preflight/fixtures/cgroup_v2_nested"},
      [](const std::string&) -> std::optional<std::string> { return std::nullopt; }, 8);
  const auto v = check_pinned_memory(input(std::uint64_t{1} << 27, 2, node));
  EXPECT_EQ(v.status, CheckStatus::kWarn) << v.finding;
  EXPECT_TRUE(contains(v.finding, "66.7% of the node's usable 4.50 GiB")) << v.finding;
  EXPECT_TRUE(contains(v.finding, "bound by cgroup v2")) << v.finding;
}

TEST(PinnedMemory, UnknownNodeMemoryWarnsWithTheReason) {
  HostMemory node;
  node.notes.push_back("cannot read MemAvailable from /proc/meminfo");
  const auto v = check_pinned_memory(input(kMiB, 1, node));
  EXPECT_EQ(v.status, CheckStatus::kWarn);
  EXPECT_TRUE(contains(v.finding, "usable host memory is unknown")) << v.finding;
  EXPECT_TRUE(contains(v.finding, "cannot read MemAvailable")) << v.finding;
  EXPECT_FALSE(v.fix.empty());
}

TEST(PinnedMemory, LockedMemoryLimitBelowThePinnedBytesWarnsAndSaysWhatItCannotKnow) {
  PinnedMemoryInput in = input(kMiB, 1, usable(64 * kGiB));  // 12 MiB per rank
  in.memlock = {64 * 1024, std::nullopt};                    // a login shell's 64 KiB
  auto v = check_pinned_memory(in);
  EXPECT_EQ(v.status, CheckStatus::kWarn);
  EXPECT_TRUE(contains(v.finding, "RLIMIT_MEMLOCK is 64.00 KiB (hard unlimited)")) << v.finding;
  EXPECT_TRUE(contains(v.finding, "cudaHostAlloc")) << v.finding;
  EXPECT_TRUE(contains(v.finding, "RDMA")) << v.finding;
  EXPECT_TRUE(contains(v.finding, "cannot tell")) << v.finding;
  EXPECT_TRUE(contains(v.fix, "ulimit -l unlimited")) << v.fix;

  in.memlock = {64 * 1024, 8 * kMiB};  // the hard limit is too low as well
  v = check_pinned_memory(in);
  EXPECT_EQ(v.status, CheckStatus::kWarn);
  EXPECT_TRUE(contains(v.fix, "hard locked-memory limit")) << v.fix;
  EXPECT_TRUE(contains(v.fix, "PropagateResourceLimits")) << v.fix;

  in.memlock = {12 * kMiB, 12 * kMiB};  // exactly enough
  v = check_pinned_memory(in);
  EXPECT_EQ(v.status, CheckStatus::kPass) << v.finding;
  EXPECT_TRUE(contains(v.finding, "RLIMIT_MEMLOCK 12.00 MiB covers")) << v.finding;
}

TEST(PinnedMemory, ANodeFailureKeepsBothFindingsAndFixes) {
  PinnedMemoryInput in = input(kGiB, 2, usable(16 * kGiB));  // 24 GiB of 16
  in.memlock = {kMiB, kMiB};
  const auto v = check_pinned_memory(in);
  EXPECT_EQ(v.status, CheckStatus::kFail);
  EXPECT_TRUE(contains(v.finding, "above preflight.host_memory_fail_fraction")) << v.finding;
  EXPECT_TRUE(contains(v.finding, "RLIMIT_MEMLOCK is 1.00 MiB")) << v.finding;
  EXPECT_TRUE(contains(v.fix, "fewer ranks per node")) << v.fix;
  EXPECT_TRUE(contains(v.fix, "limits.conf")) << v.fix;
}

TEST(PinnedMemory, HugeCountsSaturate) {
  const std::uint64_t max = std::numeric_limits<std::uint64_t>::max();
  PinnedMemoryInput in = input(max / 4, 8, usable(64 * kGiB));
  in.checkpoint_mirror_bytes = max;
  const auto v = check_pinned_memory(in);
  EXPECT_EQ(v.pinned_bytes_per_rank, max);
  EXPECT_EQ(v.pinned_bytes_on_node, max);
  EXPECT_EQ(v.status, CheckStatus::kFail);
}

TEST(PinnedMemory, ReadsThisProcesssLimit) {
  rlimit expected{};
  ASSERT_EQ(getrlimit(RLIMIT_MEMLOCK, &expected), 0);
  const MemlockLimit limit = read_memlock_limit();
  if (expected.rlim_cur == RLIM_INFINITY) {
    EXPECT_FALSE(limit.soft);
  } else {
    ASSERT_TRUE(limit.soft);
    EXPECT_EQ(*limit.soft, static_cast<std::uint64_t>(expected.rlim_cur));
  }
  if (expected.rlim_max == RLIM_INFINITY) {
    EXPECT_FALSE(limit.hard);
  } else {
    ASSERT_TRUE(limit.hard);
    EXPECT_EQ(*limit.hard, static_cast<std::uint64_t>(expected.rlim_max));
  }
}

}  // namespace
}  // namespace nss::preflight
