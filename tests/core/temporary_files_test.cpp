#include "core/temporary_files.h"

#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "core/output_directory.h"

namespace nss {
namespace {

namespace fs = std::filesystem;

class TemporaryFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("nss_temporary_files_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "staging");
    for (const auto& name : {"claimed.tmp", "released.tmp", "staging/a", "staging/b.tmp"})
      std::ofstream(dir_ / name) << "x";
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Claims in a child that then receives `signal_number`; returns its wait status.
  int claim_and_signal(int signal_number) {
    const pid_t child = ::fork();
    if (child == 0) {
      remove_temporaries_on_termination();
      TemporaryClaim file((dir_ / "claimed.tmp").string());
      TemporaryClaim released((dir_ / "released.tmp").string());
      released.release();
      TemporaryClaim staging((dir_ / "staging").string(), TemporaryClaim::Kind::kFlatDirectory);
      TemporaryClaim inside((dir_ / "staging" / "b.tmp").string());
      ::raise(signal_number);
      ::_exit(0);
    }
    int status = 0;
    ::waitpid(child, &status, 0);
    return status;
  }

  fs::path dir_;
};

TEST_F(TemporaryFilesTest, ATerminatingSignalRemovesWhatIsClaimedAndStillEndsTheProcess) {
  for (const int signal_number : {SIGTERM, SIGINT, SIGHUP}) {
    SetUp();
    const int status = claim_and_signal(signal_number);
    ASSERT_TRUE(WIFSIGNALED(status)) << signal_number;
    EXPECT_EQ(WTERMSIG(status), signal_number);
    EXPECT_FALSE(fs::exists(dir_ / "claimed.tmp"));
    EXPECT_FALSE(fs::exists(dir_ / "staging")) << "a staging directory goes with its files";
    EXPECT_TRUE(fs::exists(dir_ / "released.tmp")) << "a published file is no longer claimed";
  }
}

TEST_F(TemporaryFilesTest, AClaimEndsWithItsScope) {
  { TemporaryClaim claim((dir_ / "claimed.tmp").string()); }
  const pid_t child = ::fork();
  if (child == 0) {
    remove_temporaries_on_termination();
    ::raise(SIGTERM);
    ::_exit(0);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  EXPECT_TRUE(WIFSIGNALED(status));
  EXPECT_TRUE(fs::exists(dir_ / "claimed.tmp"));
}

TEST_F(TemporaryFilesTest, ASignalTheToolWasStartedIgnoringStaysIgnored) {
  const pid_t child = ::fork();
  if (child == 0) {
    std::signal(SIGHUP, SIG_IGN);  // as nohup starts it
    remove_temporaries_on_termination();
    TemporaryClaim file((dir_ / "claimed.tmp").string());
    ::raise(SIGHUP);
    ::_exit(3);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 3);
  EXPECT_TRUE(fs::exists(dir_ / "claimed.tmp"));
}

// An output directory is the signal's to remove only when this tool made it.
TEST_F(TemporaryFilesTest, AnOutputDirectoryGoesOnlyIfThisToolCreatedIt) {
  const auto signalled_with = [&](const fs::path& path) {
    const pid_t child = ::fork();
    if (child == 0) {
      remove_temporaries_on_termination();
      OutputDirectory dir(OutputTarget{path.string(), "test", "--output"}, "output directory",
                          {"out.csv"});
      std::ofstream(path / "out.csv.tmp.1") << "partial";
      ::raise(SIGTERM);
      ::_exit(0);
    }
    int status = 0;
    ::waitpid(child, &status, 0);
    return status;
  };
  EXPECT_TRUE(WIFSIGNALED(signalled_with(dir_ / "new")));
  EXPECT_FALSE(fs::exists(dir_ / "new"));
  EXPECT_TRUE(WIFSIGNALED(signalled_with(dir_ / "staging")));
  EXPECT_TRUE(fs::exists(dir_ / "staging" / "a")) << "an existing directory is the user's";
}

}  // namespace
}  // namespace nss
