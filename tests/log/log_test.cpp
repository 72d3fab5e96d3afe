#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

#include "core/error.h"
#include "core/fs.h"
#include "log/directory_lock.h"
#include "log/logger.h"
#include "support/test_paths.h"

namespace nss::log {
namespace {

TEST(DirectoryLock, SecondOwnerIsRefusedWithOwnerDetails) {
  const std::string dir = nss::testing::scratch_dir("lock") + "/run";
  DirectoryLock first(dir, kRunDirectory);
  try {
    DirectoryLock second(dir, kRunDirectory);
    FAIL() << "second lock was granted";
  } catch (const UsageError& e) {
    const std::string text = e.what();
    EXPECT_NE(text.find("in use by a live job"), std::string::npos) << text;
    EXPECT_NE(text.find("pid=" + std::to_string(::getpid())), std::string::npos) << text;
    EXPECT_NE(text.find("run.output_dir"), std::string::npos) << text;
  }
}

TEST(DirectoryLock, CheckpointDirectoryThatCannotBeCreatedIsACheckpointError) {
  const std::string file = nss::testing::scratch_dir("lock") + "/a_file";
  std::ofstream(file) << "x";
  try {
    DirectoryLock lock(file + "/checkpoints", kCheckpointDirectory);
    FAIL() << "a directory below a regular file was locked";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kCheckpoint);
    EXPECT_NE(std::string(e.what()).find("cannot create the checkpoint directory"),
              std::string::npos)
        << e.what();
  }
}

TEST(DirectoryLock, ReleasedOnDestructionAndWhenTheOwnerDies) {
  const std::string dir = nss::testing::scratch_dir("lock") + "/run";
  { DirectoryLock first(dir, kRunDirectory); }
  { DirectoryLock again(dir, kRunDirectory); }
  // A child takes the lock and is killed: the kernel releases it, no stale lock.
  const pid_t child = ::fork();
  if (child == 0) {
    DirectoryLock held(dir, kRunDirectory);
    ::pause();
    _exit(0);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_THROW(DirectoryLock busy(dir, kRunDirectory), UsageError);
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  EXPECT_NO_THROW(DirectoryLock after(dir, kRunDirectory));
}

TEST(Logger, RankFileCarriesRankAndLevelApplies) {
  const std::string dir = nss::testing::scratch_dir("log");
  init(3);
  attach_rank_file(dir, 3);
  set_level("warn");
  spdlog::info("hidden line");
  spdlog::warn("visible line");
  flush();
  const std::string text = read_text_file(rank_log_path(dir, 3), "test");
  EXPECT_NE(text.find("[rank 3] [warning] visible line"), std::string::npos) << text;
  EXPECT_EQ(text.find("hidden line"), std::string::npos) << text;
  EXPECT_EQ(rank_log_path("/x", 12), "/x/rank_00012.log");
  EXPECT_THROW(set_level("loud"), UsageError);
}

TEST(Logger, ARankFileScopeLogsOnlyWhileItLasts) {
  const std::string first = nss::testing::scratch_dir("log_scope_first");
  const std::string second = nss::testing::scratch_dir("log_scope_second");
  init(0);
  {
    RankFileScope scope(first, 0);
    spdlog::info("during the first job");
  }
  {
    RankFileScope scope(second, 0);
    spdlog::info("during the second job");
  }
  spdlog::info("after both");
  flush();
  const std::string one = read_text_file(rank_log_path(first, 0), "test");
  const std::string two = read_text_file(rank_log_path(second, 0), "test");
  EXPECT_NE(one.find("during the first job"), std::string::npos) << one;
  EXPECT_EQ(one.find("during the second job"), std::string::npos) << one;
  EXPECT_NE(two.find("during the second job"), std::string::npos) << two;
  EXPECT_EQ(one.find("after both"), std::string::npos) << one;
  EXPECT_EQ(two.find("after both"), std::string::npos) << two;
}

// A rank file on a full disk (a device node like /dev/full, made here) ends
// its scope with the failure reported, not thrown out of the destructor.
TEST(Logger, ARankFileScopeOnAFullDiskEndsQuietly) {
  const std::string dir = nss::testing::scratch_dir("log_scope_full");
  if (::mknod(rank_log_path(dir, 0).c_str(), S_IFCHR | 0666, makedev(1, 7)) != 0)
    GTEST_SKIP() << "cannot make a device node here (needs root)";
  init(0);
  {
    RankFileScope scope(dir, 0);
    spdlog::info("a line the disk cannot take");
  }
  spdlog::info("logging goes on");
  SUCCEED();
}

}  // namespace
}  // namespace nss::log
