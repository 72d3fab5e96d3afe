// Device selection at 1, 2 and 4 ranks on one node: the pure rules, and the
// node-local exchange of device identities that decides whether ranks share a GPU.
#include "comm/device_selection.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <mpi.h>

#include "core/error.h"
#include "support/mpi_world.h"

namespace nss::comm {
namespace {

using testing::world_rank;
using testing::world_size;

TEST(DeviceSelection, LocalRankModuloVisibleDevices) {
  EXPECT_EQ(device_for_local_rank(0, 1), 0);
  EXPECT_EQ(device_for_local_rank(5, 1), 0);  // one visible device: always device 0
  EXPECT_EQ(device_for_local_rank(3, 8), 3);
  EXPECT_EQ(device_for_local_rank(9, 8), 1);
}

TEST(DeviceSelection, NoVisibleDeviceIsAUsageError) {
  try {
    device_for_local_rank(0, 0);
    FAIL() << "expected UsageError";
  } catch (const UsageError& e) {
    EXPECT_NE(e.message().find("sees no CUDA device"), std::string::npos) << e.message();
    EXPECT_NE(e.hint().find("CUDA_VISIBLE_DEVICES"), std::string::npos) << e.hint();
  }
}

TEST(DeviceSelection, CountsRanksOnTheSamePhysicalDevice) {
  const std::vector<std::string> own = {"0000:07:00.0", "0000:0f:00.0", "0000:47:00.0"};
  for (int r = 0; r < 3; ++r) EXPECT_EQ(ranks_sharing_device(own, r, false), 1);
  // Launcher gave every rank "device 0", but two of them are the same GPU.
  const std::vector<std::string> doubled = {"0000:07:00.0", "0000:07:00.0", "0000:47:00.0"};
  EXPECT_EQ(ranks_sharing_device(doubled, 1, true), 2);
  EXPECT_EQ(ranks_sharing_device(doubled, 2, false), 1);
  try {
    ranks_sharing_device(doubled, 0, false);
    FAIL() << "expected UsageError";
  } catch (const UsageError& e) {
    EXPECT_NE(e.message().find("3 ranks on this node and 2 of them would share CUDA device "
                               "0000:07:00.0"),
              std::string::npos)
        << e.message();
    EXPECT_NE(e.hint().find("parallel.share_devices: true"), std::string::npos) << e.hint();
  }
}

// All ranks of the test run on one node, so the node-local exchange sees them all.
TEST(DeviceSelection, OneDevicePerRankNeedsNoSharing) {
  const int size = world_size();
  const DeviceAssignment a = assign_device(
      MPI_COMM_WORLD, size, [](int ordinal) { return "gpu" + std::to_string(ordinal); }, false);
  EXPECT_EQ(a.device, world_rank());
  EXPECT_EQ(a.ranks_on_device, 1);
}

TEST(DeviceSelection, MoreRanksThanDevicesFailsOnEveryRankUnlessShared) {
  const int size = world_size();
  const auto id = [](int ordinal) { return "gpu" + std::to_string(ordinal); };
  if (size == 1) {
    EXPECT_EQ(assign_device(MPI_COMM_WORLD, 1, id, false).ranks_on_device, 1);
    return;
  }
  EXPECT_THROW(assign_device(MPI_COMM_WORLD, 1, id, false), UsageError);
  const DeviceAssignment shared = assign_device(MPI_COMM_WORLD, 1, id, true);
  EXPECT_EQ(shared.device, 0);
  EXPECT_EQ(shared.ranks_on_device, size);
  // Two devices for `size` ranks: round-robin, ceil/floor halves.
  const DeviceAssignment pairs = assign_device(MPI_COMM_WORLD, 2, id, true);
  EXPECT_EQ(pairs.device, world_rank() % 2);
  EXPECT_EQ(pairs.ranks_on_device, size / 2);
}

}  // namespace
}  // namespace nss::comm
