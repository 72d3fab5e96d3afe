#include <cstdlib>
#include <numeric>
#include <vector>

#include <gtest/gtest.h>

#include "comm/hang_diagnosis.h"
#include "comm/local_communicator.h"
#include "comm/mpi_runtime.h"

namespace nss::comm {
namespace {

TEST(LocalCommunicator, ModelsRankZeroOfN) {
  LocalCommunicator comm(4);
  EXPECT_EQ(comm.rank(), 0);
  EXPECT_EQ(comm.size(), 4);
  std::vector<float> shard = {1, 2, 3};
  std::vector<float> full(12, 0);
  comm.all_gather(shard.data(), full.data(), 3, DType::kFloat32);
  EXPECT_EQ(full, (std::vector<float>{1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3}));
  std::iota(full.begin(), full.end(), 0.0f);
  comm.reduce_scatter(full.data(), shard.data(), 3, DType::kFloat32);
  EXPECT_EQ(shard, (std::vector<float>{0, 1, 2}));
  double value = 5;
  comm.all_reduce(&value, 1, ReduceOp::kSum);
  EXPECT_EQ(value, 5);
}

TEST(LocalCommunicator, AccountsBytesAsIfNRanks) {
  LocalCommunicator comm(4);
  std::vector<float> shard(10), full(40);
  comm.all_gather(shard.data(), full.data(), 10, DType::kFloat32);
  comm.reduce_scatter(full.data(), shard.data(), 10, DType::kFloat32);
  comm.all_reduce(full.data(), 40, DType::kFloat32, ReduceOp::kSum);
  const CommStats stats = comm.stats();
  // all_gather/reduce_scatter: full buffer (160 B) x 3/4; all_reduce: 2 x 160 x 3/4.
  EXPECT_EQ(stats[CollectiveKind::kAllGather].bytes, 120.0);
  EXPECT_EQ(stats[CollectiveKind::kReduceScatter].bytes, 120.0);
  EXPECT_EQ(stats[CollectiveKind::kAllReduce].bytes, 240.0);
  EXPECT_EQ(stats[CollectiveKind::kAllGather].calls, 1u);
  EXPECT_EQ(stats.total_bytes(), 480.0);
  const CommStats before = comm.stats();
  comm.all_gather(shard.data(), full.data(), 10, DType::kFloat32);
  EXPECT_EQ(comm.stats().since(before).total_bytes(), 120.0);
  comm.reset_stats();
  EXPECT_EQ(comm.stats().total_bytes(), 0.0);
}

TEST(LocalCommunicator, TrackerNumbersAndLabelsCollectives) {
  LocalCommunicator comm(2);
  float x = 0;
  {
    CollectiveLabel label(comm, "unit 3 backward");
    comm.all_reduce(&x, 1, ReduceOp::kSum);
  }
  comm.barrier();
  const auto snapshot = comm.tracker().snapshot();
  EXPECT_EQ(snapshot.started, 2u);
  EXPECT_EQ(snapshot.finished, 2u);
  EXPECT_FALSE(snapshot.in_flight);
  EXPECT_EQ(snapshot.last_finished.kind, CollectiveKind::kBarrier);
  EXPECT_EQ(snapshot.last_finished.label, "");
  comm.tracker().push_label("outer");
  EXPECT_EQ(comm.tracker().label(), "outer");
}

// NCCL returns from shard collectives once they are enqueued: several are in
// flight, they finish in order, and the watchdog sees the oldest.
TEST(CollectiveTracker, SeveralInFlightFinishInOrder) {
  CollectiveTracker tracker;
  tracker.push_label("unit 1 forward");
  EXPECT_EQ(tracker.begin(CollectiveKind::kAllGather, 64), 1u);
  tracker.pop_label();
  EXPECT_EQ(tracker.begin(CollectiveKind::kAllGather, 32), 2u);
  EXPECT_EQ(tracker.begin(CollectiveKind::kReduceScatter, 16), 3u);
  auto snapshot = tracker.snapshot();
  EXPECT_TRUE(snapshot.in_flight);
  EXPECT_EQ(snapshot.started, 3u);
  EXPECT_EQ(snapshot.finished, 0u);
  EXPECT_EQ(snapshot.current.seq, 1u);  // the oldest: the one a hang is stuck in
  EXPECT_EQ(snapshot.current.label, "unit 1 forward");
  tracker.finish_through(2);
  snapshot = tracker.snapshot();
  EXPECT_TRUE(snapshot.in_flight);
  EXPECT_EQ(snapshot.finished, 2u);
  EXPECT_EQ(snapshot.current.seq, 3u);
  EXPECT_EQ(snapshot.current.kind, CollectiveKind::kReduceScatter);
  tracker.finish_through(1);  // already finished: nothing changes
  EXPECT_EQ(tracker.snapshot().finished, 2u);
  tracker.finish_through(3);
  snapshot = tracker.snapshot();
  EXPECT_FALSE(snapshot.in_flight);
  EXPECT_EQ(snapshot.last_finished.seq, 3u);
  EXPECT_EQ(snapshot.current.seq, 3u);  // nothing in flight: the last started
}

TEST(LocalCommunicator, RejectsNullBuffers) {
  LocalCommunicator comm(2);
  EXPECT_THROW(comm.all_gather(nullptr, nullptr, 4, DType::kFloat32), InternalError);
  float x = 0;
  EXPECT_THROW(comm.broadcast(&x, 1, DType::kFloat32, 5), InternalError);
}

RankStatus status(int rank, std::uint64_t started, std::uint64_t finished, CollectiveKind kind,
                  const char* label) {
  CollectiveTracker::Snapshot s;
  s.started = started;
  s.finished = finished;
  s.in_flight = started != finished;
  s.seconds_in_flight = s.in_flight ? 12.0 : 0;
  s.seconds_since_finish = 12.0;
  s.current = {started, kind, 64, label};
  s.last_finished = {finished, kind, 64, label};
  return make_rank_status(rank, s);
}

std::string joined(const std::vector<std::string>& lines) {
  std::string text;
  for (const auto& line : lines) text += line + "\n";
  return text;
}

TEST(HangDiagnosis, NamesTheRankThatIsBehind) {
  std::vector<std::optional<RankStatus>> statuses;
  for (int r = 0; r < 4; ++r)
    statuses.push_back(r == 1
                           ? status(1, 1233, 1233, CollectiveKind::kAllGather, "unit 17 backward")
                           : status(r, 1234, 1233, CollectiveKind::kAllReduce, "grad norm"));
  const std::string text = joined(diagnose_hang(statuses, 10));
  EXPECT_NE(text.find("ranks 0,2,3 are waiting in all_reduce #1234 (grad norm)"), std::string::npos)
      << text;
  EXPECT_NE(text.find("rank 1 (host"), std::string::npos) << text;
  EXPECT_NE(text.find("is behind: last finished all_gather #1233 (unit 17 backward)"),
            std::string::npos)
      << text;
}

TEST(HangDiagnosis, DivergedAndStuckAndSilent) {
  std::vector<std::optional<RankStatus>> diverged = {
      status(0, 5, 4, CollectiveKind::kAllReduce, ""),
      status(1, 5, 4, CollectiveKind::kBarrier, ""),
      status(2, 5, 4, CollectiveKind::kAllReduce, "")};
  EXPECT_NE(joined(diagnose_hang(diverged, 10)).find("diverged: it is in barrier #5"),
            std::string::npos);
  std::vector<std::optional<RankStatus>> stuck = {status(0, 5, 4, CollectiveKind::kAllGather, ""),
                                                  status(1, 5, 4, CollectiveKind::kAllGather, ""),
                                                  std::nullopt};
  const std::string text = joined(diagnose_hang(stuck, 10));
  EXPECT_NE(text.find("the collective itself is stuck"), std::string::npos) << text;
  EXPECT_NE(text.find("ranks 2 did not answer"), std::string::npos) << text;
}

TEST(HangDiagnosis, RankListsAreCompact) {
  EXPECT_EQ(format_rank_list({0, 1, 2, 3, 4, 6, 7}), "0-4,6,7");
  EXPECT_EQ(format_rank_list({5}), "5");
  EXPECT_EQ(format_rank_list({3, 1}), "1,3");
}

TEST(Threads, EnvironmentWinsElseCpusAreShared) {
  ::setenv("OMP_NUM_THREADS", "3", 1);
  EXPECT_EQ(threads_per_rank(16, 4, true), 3);
  ::unsetenv("OMP_NUM_THREADS");
  EXPECT_EQ(threads_per_rank(16, 4, true), 4);
  EXPECT_EQ(threads_per_rank(4, 4, false), 4);
  EXPECT_EQ(threads_per_rank(2, 4, true), 1);
  EXPECT_GE(usable_cpus(), 1);
}

}  // namespace
}  // namespace nss::comm
