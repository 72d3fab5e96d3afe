#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
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

// nss_synthesize runs nss_hpc's job twice in one process: the rank file
// attached twice still gets each line once.
TEST(Logger, AFileAttachedTwiceGetsEachLineOnce) {
  const std::string dir = nss::testing::scratch_dir("log_twice");
  init(0);
  attach_rank_file(dir, 0);
  attach_rank_file(dir, 0);
  spdlog::info("one line");
  flush();
  const std::string text = read_text_file(rank_log_path(dir, 0), "test");
  EXPECT_EQ(text.find("one line"), text.rfind("one line")) << text;
  EXPECT_NE(text.find("one line"), std::string::npos) << text;
}

}  // namespace
}  // namespace nss::log
