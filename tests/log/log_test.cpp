#include <gtest/gtest.h>
#include <spdlog/spdlog.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <thread>

#include "core/error.h"
#include "core/fs.h"
#include "log/logger.h"
#include "log/run_directory_lock.h"
#include "support/test_paths.h"

namespace nss::log {
namespace {

TEST(RunDirectoryLock, SecondOwnerIsRefusedWithOwnerDetails) {
  const std::string dir = nss::testing::scratch_dir("lock") + "/run";
  RunDirectoryLock first(dir);
  try {
    RunDirectoryLock second(dir);
    FAIL() << "second lock was granted";
  } catch (const UsageError& e) {
    const std::string text = e.what();
    EXPECT_NE(text.find("in use by a live job"), std::string::npos) << text;
    EXPECT_NE(text.find("pid=" + std::to_string(::getpid())), std::string::npos) << text;
    EXPECT_NE(text.find("run.output_dir"), std::string::npos) << text;
  }
}

TEST(RunDirectoryLock, ReleasedOnDestructionAndWhenTheOwnerDies) {
  const std::string dir = nss::testing::scratch_dir("lock") + "/run";
  { RunDirectoryLock first(dir); }
  { RunDirectoryLock again(dir); }
  // A child takes the lock and is killed: the kernel releases it, no stale lock.
  const pid_t child = ::fork();
  if (child == 0) {
    RunDirectoryLock held(dir);
    ::pause();
    _exit(0);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_THROW(RunDirectoryLock busy(dir), UsageError);
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  EXPECT_NO_THROW(RunDirectoryLock after(dir));
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

}  // namespace
}  // namespace nss::log
