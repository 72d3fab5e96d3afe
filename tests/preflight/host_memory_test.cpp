// Usable host memory from fixture file trees: cgroup v2 and v1 (nested Slurm
// hierarchies, a container that sees only its own cgroup, "max" everywhere),
// MemAvailable and Slurm's limits.
#include "preflight/host_memory.h"

#include <map>

#include <gtest/gtest.h>

#include "preflight/cgroup_memory.h"
#include "support/test_paths.h"

namespace nss::preflight {
namespace {

constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;
constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;

SystemRoot fixture(const std::string& name) {
  return {nss::testing::source_dir() + "/tests/preflight/fixtures/" + name};
}

EnvLookup environment(std::map<std::string, std::string> variables) {
  return [variables](const std::string& name) -> std::optional<std::string> {
    const auto it = variables.find(name);
    if (it == variables.end()) return std::nullopt;
    return it->second;
  };
}

TEST(Meminfo, ParsesMemAvailableInKibibytes) {
  EXPECT_EQ(parse_meminfo_available("MemTotal: 100 kB\nMemAvailable:    2048 kB\n"), 2048u * 1024);
  EXPECT_FALSE(parse_meminfo_available("MemTotal: 100 kB\nMemFree: 5 kB\n"));
}

TEST(ProcCgroup, FindsV2PathAndV1MemoryController) {
  const auto membership = parse_proc_cgroup(
      "12:pids:/a\n11:cpu,memory:/slurm/job_1/step_0\n1:name=systemd:/x\n0::/user.slice/s\n");
  EXPECT_EQ(membership.v2_path, "/user.slice/s");
  EXPECT_EQ(membership.v1_memory_path, "/slurm/job_1/step_0");
  EXPECT_TRUE(parse_proc_cgroup("4:cpu:/a\n").v2_path.empty());
}

TEST(Mountinfo, FindsCgroupMountsAndDecodesEscapes) {
  const auto mounts = parse_mountinfo(
      "22 1 259:2 / / rw - ext4 /dev/sda rw\n"
      "39 31 0:34 / /sys/fs/cgroup/cpu,cpuacct rw shared:1 - cgroup cgroup rw,cpu,cpuacct\n"
      "40 31 0:35 /docker/ab /sys/fs/cgroup/mem\\040ory rw shared:1 - cgroup cgroup rw,memory\n"
      "41 31 0:36 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n");
  ASSERT_TRUE(mounts.v1_memory);
  EXPECT_EQ(mounts.v1_memory->root, "/docker/ab");
  EXPECT_EQ(mounts.v1_memory->mount_point, "/sys/fs/cgroup/mem ory");
  ASSERT_TRUE(mounts.v2);
  EXPECT_EQ(mounts.v2->mount_point, "/sys/fs/cgroup/unified");
}

TEST(CgroupDirectory, MapsThePathUnderTheMountRoot) {
  EXPECT_EQ(cgroup_directory({"/", "/sys/fs/cgroup"}, "/a/b"), "/sys/fs/cgroup/a/b");
  EXPECT_EQ(cgroup_directory({"/", "/sys/fs/cgroup"}, "/"), "/sys/fs/cgroup");
  EXPECT_EQ(cgroup_directory({"/docker/ab", "/sys/fs/cgroup/memory"}, "/docker/ab"),
            "/sys/fs/cgroup/memory");
  EXPECT_EQ(cgroup_directory({"/docker/ab", "/sys/fs/cgroup/memory"}, "/docker/ab/c"),
            "/sys/fs/cgroup/memory/c");
  // Outside what the mount exposes (or a sibling with a common prefix).
  EXPECT_FALSE(cgroup_directory({"/docker/ab", "/m"}, "/other"));
  EXPECT_FALSE(cgroup_directory({"/docker/ab", "/m"}, "/docker/abc"));
}

TEST(HostMemory, CgroupV2NestedTightestLevelBinds) {
  // step_0: 7 GiB - 2.5 GiB in use = 4.5 GiB; job_7: 8 GiB - (3 GiB - 1 GiB
  // reclaimable cache) = 6 GiB; MemAvailable 60 GiB.
  const HostMemory memory = read_host_memory(fixture("cgroup_v2_nested"), environment({}), 8);
  ASSERT_TRUE(memory.usable_bytes);
  EXPECT_EQ(*memory.usable_bytes, 4 * kGiB + 512 * kMiB);
  EXPECT_EQ(memory.bound_by, "cgroup v2 /sys/fs/cgroup/system.slice/slurmstepd.scope/job_7/step_0");
  ASSERT_EQ(memory.limits.size(), 2u);
  EXPECT_EQ(memory.limits[0].source, "MemAvailable");
  EXPECT_EQ(memory.limits[0].bytes, 60 * kGiB);
  EXPECT_TRUE(memory.notes.empty());
}

TEST(HostMemory, CgroupV2LevelHeadroomDiscountsReclaimableCache) {
  const SystemRoot root = fixture("cgroup_v2_nested");
  const std::string job = "/sys/fs/cgroup/system.slice/slurmstepd.scope/job_7";
  const auto limit = cgroup_headroom(root, job, "/sys/fs/cgroup", 2);
  ASSERT_TRUE(limit);
  EXPECT_EQ(limit->bytes, 6 * kGiB);
  EXPECT_NE(limit->detail.find("memory.max 8.00 GiB"), std::string::npos) << limit->detail;
}

TEST(HostMemory, CgroupV1NestedJobLimitBinds) {
  // job_42: 4 GiB - (1 GiB - 512 MiB inactive file cache) = 3.5 GiB.
  const HostMemory memory = read_host_memory(fixture("cgroup_v1_nested"), environment({}), 8);
  ASSERT_TRUE(memory.usable_bytes);
  EXPECT_EQ(*memory.usable_bytes, 3 * kGiB + 512 * kMiB);
  EXPECT_EQ(memory.bound_by, "cgroup v1 /sys/fs/cgroup/memory/slurm/uid_1000/job_42");
}

TEST(HostMemory, CgroupV1ContainerUsesInheritedLimit) {
  // Only our own cgroup is mounted; its limit comes from hierarchical_memory_limit.
  const HostMemory memory = read_host_memory(fixture("cgroup_v1_container"), environment({}), 8);
  ASSERT_TRUE(memory.usable_bytes);
  EXPECT_EQ(*memory.usable_bytes, 2 * kGiB - 512 * kMiB);
  EXPECT_EQ(memory.bound_by, "cgroup v1 /sys/fs/cgroup/memory");
  EXPECT_NE(memory.limits.back().detail.find("hierarchical_memory_limit"), std::string::npos);
}

TEST(HostMemory, UnlimitedCgroupLeavesMemAvailable) {
  const HostMemory memory = read_host_memory(fixture("cgroup_v2_unlimited"), environment({}), 8);
  ASSERT_TRUE(memory.usable_bytes);
  EXPECT_EQ(*memory.usable_bytes, 12 * kGiB);
  EXPECT_EQ(memory.bound_by, "MemAvailable");
  EXPECT_EQ(memory.limits.size(), 1u);
}

TEST(HostMemory, SlurmMemPerNodeBindsBelowEverythingElse) {
  const HostMemory memory = read_host_memory(fixture("cgroup_v2_nested"),
                                             environment({{"SLURM_MEM_PER_NODE", "2048"}}), 8);
  EXPECT_EQ(*memory.usable_bytes, 2 * kGiB);
  EXPECT_EQ(memory.bound_by, "SLURM_MEM_PER_NODE");
  EXPECT_EQ(memory.limits.size(), 3u);
}

TEST(HostMemory, SlurmMemPerCpuTimesCpusOnNode) {
  std::vector<std::string> notes;
  auto limit = slurm_memory_limit(
      environment({{"SLURM_MEM_PER_CPU", "1024"}, {"SLURM_CPUS_ON_NODE", "3"}}), 8, notes);
  ASSERT_TRUE(limit);
  EXPECT_EQ(limit->bytes, 3 * kGiB);
  EXPECT_NE(limit->detail.find("SLURM_CPUS_ON_NODE"), std::string::npos);
  // Without SLURM_CPUS_ON_NODE, the CPUs this process may use.
  limit = slurm_memory_limit(environment({{"SLURM_MEM_PER_CPU", "512M"}}), 4, notes);
  ASSERT_TRUE(limit);
  EXPECT_EQ(limit->bytes, 2 * kGiB);
  EXPECT_TRUE(notes.empty());
}

TEST(HostMemory, SlurmSuffixesZeroAndGarbage) {
  std::vector<std::string> notes;
  EXPECT_EQ(slurm_memory_limit(environment({{"SLURM_MEM_PER_NODE", "3G"}}), 1, notes)->bytes,
            3 * kGiB);
  // --mem=0 means the whole node: no limit of Slurm's own.
  EXPECT_FALSE(slurm_memory_limit(environment({{"SLURM_MEM_PER_NODE", "0"}}), 1, notes));
  EXPECT_TRUE(notes.empty());
  EXPECT_FALSE(slurm_memory_limit(environment({{"SLURM_MEM_PER_NODE", "lots"}}), 1, notes));
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("SLURM_MEM_PER_NODE='lots'"), std::string::npos);
  EXPECT_FALSE(slurm_memory_limit(environment({}), 1, notes));
}

TEST(HostMemory, NothingReadableIsUnknownWithNotes) {
  const HostMemory memory =
      read_host_memory({nss::testing::scratch_dir("empty_root")}, environment({}), 1);
  EXPECT_FALSE(memory.usable_bytes);
  EXPECT_EQ(memory.notes.size(), 2u);  // meminfo, and the cgroup files
}

TEST(HostMemory, RealSystemHasAnAnswer) {
  const HostMemory memory = read_host_memory({}, process_environment(), 1);
  ASSERT_TRUE(memory.usable_bytes);
  EXPECT_GT(*memory.usable_bytes, 0u);
  EXPECT_FALSE(memory.bound_by.empty());
}

}  // namespace
}  // namespace nss::preflight
