// The preflight's collective parts at 1, 2 and 4 ranks: facts from every rank
// reach everyone, the verdict channel delivers (and lets a receiver give up
// and keep waiting), and run_preflight ends every rank the same way.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

#include "comm/agreement.h"
#include "comm/mpi_communicator.h"
#include "core/fs.h"
#include "preflight/preflight.h"
#include "preflight/verdict_channel.h"
#include "support/test_paths.h"

namespace nss::preflight {
namespace {

std::unique_ptr<comm::MpiCommunicator> world() {
  return comm::MpiCommunicator::create(MPI_COMM_WORLD);
}

// A directory made by rank 0 and known to every rank.
std::string shared_dir(comm::Communicator& comm, const std::string& tag) {
  std::string dir = comm.rank() == 0 ? nss::testing::scratch_dir(tag) : std::string();
  comm::broadcast_text(comm, dir, 0);
  return dir;
}

// A file with the HDF5 signature, all the built-in format check looks for.
std::string hdf5_like_file(const std::string& dir) {
  const std::string path = dir + "/train.h5";
  std::ofstream(path, std::ios::binary)
      << std::string("\x89HDF\r\n\x1a\n", 8) << std::string(1000, '\0');
  return path;
}

class Quiet : public ::testing::Environment {
  void SetUp() override { spdlog::set_level(spdlog::level::warn); }
};
const auto* const kQuiet = ::testing::AddGlobalTestEnvironment(new Quiet);

TEST(RankFactsExchange, EveryRankSeesEveryRanksFacts) {
  auto comm = world();
  const std::string dir = shared_dir(*comm, "facts");
  if (comm->rank() == 0) hdf5_like_file(dir);
  comm->barrier();

  FactsRequest request;
  request.datasets = {{"train", dir + "/train.h5"}, {"eval", dir + "/missing.h5"}};
  request.timeout_s = 10;
  request.root = {nss::testing::source_dir() + "/tests/preflight/fixtures/cgroup_v2_nested"};
  request.env = [](const std::string&) { return std::optional<std::string>(); };
  const auto layout = comm::discover_layout(MPI_COMM_WORLD);
  const auto all = exchange_rank_facts(*comm, collect_rank_facts(layout, request));

  ASSERT_EQ(static_cast<int>(all.size()), comm->size());
  for (int r = 0; r < comm->size(); ++r) {
    const RankFacts& facts = all[static_cast<std::size_t>(r)];
    EXPECT_EQ(facts.rank, r);
    EXPECT_EQ(facts.host, layout.host);
    EXPECT_EQ(facts.local_size, comm->size());
    EXPECT_EQ(*facts.memory.usable_bytes, (std::uint64_t{9} << 30) / 2);
    ASSERT_EQ(facts.datasets.size(), 2u);
    EXPECT_TRUE(facts.datasets[0].probe.readable);
    EXPECT_TRUE(facts.datasets[0].probe.hdf5_signature);
    EXPECT_EQ(facts.datasets[1].probe.problem, "does not exist");
  }
}

TEST(VerdictChannel, DeliversTheVerdictToEveryRank) {
  auto comm = world();
  VerdictChannel channel(MPI_COMM_WORLD, 0);
  Verdict sent;
  sent.go = false;
  sent.code = ExitCode::kData;
  sent.reason = "no-go: [data.open] " + std::string(3000, 'x');
  sent.hint = "fix data.path";
  if (comm->rank() == 0) {
    channel.send(sent);
  } else {
    const auto received = channel.receive(30);
    ASSERT_TRUE(received);
    EXPECT_FALSE(received->go);
    EXPECT_EQ(received->code, ExitCode::kData);
    EXPECT_EQ(received->reason, sent.reason.substr(0, 2047));
    EXPECT_EQ(received->hint, "fix data.path");
  }
}

TEST(VerdictChannel, ReceiverGivesUpAtTheDeadlineAndCanWaitAgain) {
  auto comm = world();
  VerdictChannel channel(MPI_COMM_WORLD, 0);
  if (comm->rank() == 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    channel.send(Verdict{});
  } else {
    const auto start = std::chrono::steady_clock::now();
    EXPECT_FALSE(channel.receive(0.3));
    const double waited =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_GE(waited, 0.3);
    EXPECT_LT(waited, 1.4);
    const auto late = channel.receive(30);
    ASSERT_TRUE(late);
    EXPECT_TRUE(late->go);
  }
}

class RunPreflightTest : public ::testing::Test {
 protected:
  RunPreflightTest() : comm(world()), layout(comm::discover_layout(MPI_COMM_WORLD)) {
    run_dir = shared_dir(*comm, "run_preflight");
    if (comm->rank() == 0) hdf5_like_file(run_dir);
    comm->barrier();
    config.data.path = run_dir + "/train.h5";
    config.checkpoint.dir = run_dir + "/checkpoints";
    config.training.micro_batch_size = 1;
    config.training.global_batch_size = comm->size() * 2;
    config.preflight.first_batch_timeout_s = 10;
    config.preflight.verdict_timeout_s = 60;
  }

  // The AgreedError every rank must throw, as (code, text).
  std::pair<ExitCode, std::string> expect_no_go() {
    try {
      run_preflight(*comm, MPI_COMM_WORLD, {config, layout, DeviceKind::kCpu, run_dir}, {});
    } catch (const comm::AgreedError& e) {
      return {e.code(), e.what()};
    }
    ADD_FAILURE() << "run_preflight returned go";
    return {ExitCode::kOk, ""};
  }

  std::unique_ptr<comm::MpiCommunicator> comm;
  comm::ProcessLayout layout;
  config::Config config;
  std::string run_dir;
};

TEST_F(RunPreflightTest, GoOnEveryRankAndRankZeroWritesTheReport) {
  const Verdict verdict =
      run_preflight(*comm, MPI_COMM_WORLD, {config, layout, DeviceKind::kCpu, run_dir}, {});
  EXPECT_TRUE(verdict.go);
  if (comm->rank() == 0) {
    const auto json = nlohmann::json::parse(read_text_file(run_dir + "/preflight.json", "test"));
    EXPECT_EQ(json["verdict"], "go");
    EXPECT_EQ(json["world_size"], comm->size());
    EXPECT_EQ(json["ranks"].size(), static_cast<std::size_t>(comm->size()));
  }
}

TEST_F(RunPreflightTest, MissingDatasetIsTheSameNoGoOnEveryRank) {
  config.data.path = run_dir + "/missing.h5";
  const auto [code, text] = expect_no_go();
  EXPECT_EQ(code, ExitCode::kData);
  EXPECT_NE(text.find("[preflight] no-go: [data.open] rank 0"), std::string::npos) << text;
  // Every rank holds the same message.
  std::string mine = text;
  comm::broadcast_text(*comm, mine, 0);
  EXPECT_EQ(mine, text);
}

TEST_F(RunPreflightTest, BadBatchArithmeticIsExitTwo) {
  config.training.micro_batch_size = 2;
  config.training.global_batch_size = 2 * comm->size() + 1;
  const auto [code, text] = expect_no_go();
  EXPECT_EQ(code, ExitCode::kUsage);
  EXPECT_NE(text.find("[layout.batch]"), std::string::npos) << text;
}

TEST_F(RunPreflightTest, FailureOnRankZeroStillReachesEveryRankAtOnce) {
  const std::string unwritable = run_dir + "/not/there";
  const auto start = std::chrono::steady_clock::now();
  try {
    run_preflight(*comm, MPI_COMM_WORLD, {config, layout, DeviceKind::kCpu, unwritable}, {});
    ADD_FAILURE() << "run_preflight returned go without writing preflight.json";
  } catch (const comm::AgreedError& e) {
    EXPECT_EQ(e.code(), ExitCode::kInternal);
    EXPECT_NE(std::string(e.what()).find("cannot create"), std::string::npos) << e.what();
  }
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 30);
}

}  // namespace
}  // namespace nss::preflight
