// The dataset probe: regular files are read (HDF5 signature at 0 or after a
// user block), special files and missing paths fail at once with a clear
// reason, and an inspection that blocks in the kernel fails at the deadline.
#include "preflight/path_probe.h"

#include <chrono>
#include <fstream>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "support/test_paths.h"

namespace nss::preflight {
namespace {

const std::string kSignature("\x89HDF\r\n\x1a\n", 8);

std::string write_file(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

class PathProbeTest : public ::testing::Test {
 protected:
  std::string dir = nss::testing::scratch_dir("probe");
};

TEST_F(PathProbeTest, Hdf5SignatureAtStart) {
  const auto probe = inspect_path(write_file(dir + "/a.h5", kSignature + std::string(100, 'x')));
  EXPECT_TRUE(probe.readable) << probe.problem;
  EXPECT_TRUE(probe.hdf5_signature);
  EXPECT_EQ(probe.size_bytes, 108u);
  EXPECT_TRUE(probe.problem.empty());
}

TEST_F(PathProbeTest, Hdf5SignatureAfterAUserBlock) {
  const auto probe = inspect_path(write_file(dir + "/b.h5", std::string(512, 'u') + kSignature));
  EXPECT_TRUE(probe.hdf5_signature);
  // ... but not at an offset where HDF5 never puts it.
  EXPECT_FALSE(
      inspect_path(write_file(dir + "/c.h5", std::string(100, 'u') + kSignature)).hdf5_signature);
}

TEST_F(PathProbeTest, TextAndEmptyFilesAreReadableButNotHdf5) {
  const auto text = inspect_path(write_file(dir + "/t.txt", "hello world, not hdf5"));
  EXPECT_TRUE(text.readable);
  EXPECT_FALSE(text.hdf5_signature);
  const auto empty = inspect_path(write_file(dir + "/e.h5", ""));
  EXPECT_TRUE(empty.readable);
  EXPECT_EQ(empty.size_bytes, 0u);
  EXPECT_FALSE(empty.hdf5_signature);
}

TEST_F(PathProbeTest, MissingFileNamesThePathSetting) {
  const auto probe = inspect_path(dir + "/nope.h5");
  EXPECT_FALSE(probe.readable);
  EXPECT_EQ(probe.problem, "does not exist");
  EXPECT_NE(probe.hint.find("data.path"), std::string::npos);
  EXPECT_NE(probe.hint.find("nss_prepare_data"), std::string::npos);
}

TEST_F(PathProbeTest, DirectoryFailsAtOnce) {
  const auto probe = inspect_path(dir);
  EXPECT_FALSE(probe.readable);
  EXPECT_EQ(probe.problem, "is a directory");
}

TEST_F(PathProbeTest, FifoFailsAtOnceEvenWithALongDeadline) {
  const std::string fifo = dir + "/fifo.h5";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const auto start = std::chrono::steady_clock::now();
  const auto probe = probe_path(fifo, 5.0);
  EXPECT_LT(seconds_since(start), 1.0);
  EXPECT_FALSE(probe.readable);
  EXPECT_FALSE(probe.timed_out);
  EXPECT_EQ(probe.problem, "is a FIFO (named pipe), not a file");
  EXPECT_NE(probe.hint.find("regular file"), std::string::npos);
}

TEST_F(PathProbeTest, SocketFailsAtOnce) {
  const std::string path = dir + "/socket.h5";
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  ASSERT_LT(path.size(), sizeof address.sun_path);
  path.copy(address.sun_path, path.size());
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  const auto probe = inspect_path(path);
  ::close(fd);
  EXPECT_FALSE(probe.readable);
  EXPECT_EQ(probe.problem, "is a socket or a device without a reader, not a file");
}

TEST_F(PathProbeTest, CharacterDeviceIsNotADataset) {
  const auto probe = inspect_path("/dev/null");
  EXPECT_FALSE(probe.readable);
  EXPECT_EQ(probe.problem, "is a character device, not a file");
}

TEST_F(PathProbeTest, InspectionBlockedInTheKernelFailsAtTheDeadline) {
  // Stands in for a stuck network mount: open() never returns.
  const PathInspector stuck = [](const std::string& path) {
    int fds[2];
    if (::pipe(fds) == 0) {
      char byte;
      (void)::read(fds[0], &byte, 1);
    }
    return inspect_path(path);
  };
  const auto start = std::chrono::steady_clock::now();
  const auto probe = probe_path("/mnt/stuck/train.h5", 0.5, stuck);
  const double waited = seconds_since(start);
  EXPECT_GE(waited, 0.5);
  EXPECT_LT(waited, 2.0);
  EXPECT_TRUE(probe.timed_out);
  EXPECT_FALSE(probe.readable);
  EXPECT_EQ(probe.path, "/mnt/stuck/train.h5");
  EXPECT_EQ(probe.problem,
            "could not open within 0.5 s (preflight.first_batch_timeout_s); its file system does "
            "not answer");
  EXPECT_DOUBLE_EQ(probe.seconds, 0.5);
}

}  // namespace
}  // namespace nss::preflight
