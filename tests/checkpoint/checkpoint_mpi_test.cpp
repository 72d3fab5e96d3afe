// Collective save/load at 1, 2 and 4 ranks: round trips, N -> M resharding
// (4->2, 2->4, 4->3, 3->1 inside a 4-rank job through sub-communicators),
// asynchronous snapshots, and failures that every rank must agree on.
#include <chrono>
#include <cmath>
#include <filesystem>
#include <limits>
#include <thread>

#include <gtest/gtest.h>
#include <mpi.h>

#include "checkpoint/async_saver.h"
#include "checkpoint/load.h"
#include "checkpoint/save.h"
#include "checkpoint/step_directory.h"
#include "checkpoint/verify.h"
#include "comm/agreement.h"
#include "comm/mpi_communicator.h"
#include "support/test_paths.h"
#include "synthetic_state.h"
#include "test_helpers.h"

namespace nss::checkpoint {
namespace {

namespace fs = std::filesystem;
using testing::RankState;

std::unique_ptr<comm::MpiCommunicator> world() {
  return comm::MpiCommunicator::create(MPI_COMM_WORLD);
}

// A scratch directory made by rank 0 and known to every rank.
std::string shared_dir(comm::Communicator& comm, const std::string& tag) {
  std::string dir = comm.rank() == 0 ? testing::scratch_dir(tag) : std::string();
  comm::broadcast_text(comm, dir, 0);
  return dir;
}

void remove_shared(comm::Communicator& comm, const std::string& dir) {
  comm.barrier();
  if (comm.rank() == 0) fs::remove_all(dir);
}

const testing::SyntheticModel& model() {
  static const auto m = testing::synthetic_model();
  return m;
}

SaveRequest request(const std::string& dir, std::int64_t step) {
  SaveRequest r;
  r.checkpoint_dir = dir;
  r.step = step;
  r.tensors = model().tensors;
  r.state = {{"step", step}};
  r.keep_last = 0;
  r.checksum_block_bytes = 512;
  return r;
}

// Every one of `steps` loads back with the values fill_rank_state wrote for it.
void expect_steps_hold_their_values(comm::Communicator& comm, const std::string& dir,
                                    std::initializer_list<std::int64_t> steps) {
  for (const std::int64_t step : steps) {
    RankState loaded = testing::make_rank_state(model(), comm.rank(), comm.size());
    load_checkpoint(comm, step_dir_path(dir, step), model().tensors, loaded.buffers, LoadOptions{});
    EXPECT_EQ(testing::count_mismatches(loaded, step), 0u) << step;
  }
}

SaveResult save_at(comm::Communicator& comm, const std::string& dir, std::int64_t step) {
  RankState state = testing::make_rank_state(model(), comm.rank(), comm.size());
  testing::fill_rank_state(state, step);
  return save_checkpoint(comm, request(dir, step), state.buffers);
}

TEST(CheckpointMpi, RoundTripAtThisWorldSize) {
  auto comm = world();
  const std::string dir = shared_dir(*comm, "ckpt_rt");
  const SaveResult saved = save_at(*comm, dir, 11);
  RankState state = testing::make_rank_state(model(), comm->rank(), comm->size());
  const LoadResult loaded =
      load_checkpoint(*comm, saved.step_dir, model().tensors, state.buffers, LoadOptions{});
  EXPECT_EQ(loaded.step, 11);
  EXPECT_EQ(loaded.saved_world_size, comm->size());
  EXPECT_EQ(testing::count_mismatches(state, 11), 0u);
  if (comm->rank() == 0) {
    const auto report = verify_checkpoint(saved.step_dir);
    EXPECT_TRUE(report.ok()) << (report.problems.empty() ? "" : report.problems[0]);
    const auto index = read_index(saved.step_dir);
    EXPECT_EQ(index.file_bytes.size(), static_cast<std::size_t>(comm->size()));
  }
  remove_shared(*comm, dir);
}

// Saves with the first `from` ranks and loads with the first `to` ranks.
void reshard(int from, int to) {
  auto comm = world();
  if (comm->size() < std::max(from, to)) GTEST_SKIP() << "needs " << std::max(from, to) << " ranks";
  const std::string dir = shared_dir(*comm, "ckpt_reshard");
  auto subset = [&](int n) {
    MPI_Comm sub;
    MPI_Comm_split(MPI_COMM_WORLD, comm->rank() < n ? 0 : MPI_UNDEFINED, comm->rank(), &sub);
    std::unique_ptr<comm::MpiCommunicator> c;
    if (sub != MPI_COMM_NULL) {
      c = comm::MpiCommunicator::create(sub);
      MPI_Comm_free(&sub);
    }
    return c;
  };
  if (auto writers = subset(from)) save_at(*writers, dir, 100 + from);
  comm->barrier();
  if (auto readers = subset(to)) {
    RankState state = testing::make_rank_state(model(), readers->rank(), readers->size());
    const auto loaded =
        resume_checkpoint(*readers, dir, "auto", model().tensors, state.buffers, LoadOptions{});
    ASSERT_TRUE(loaded);
    EXPECT_EQ(loaded->saved_world_size, from);
    EXPECT_EQ(testing::count_mismatches(state, 100 + from), 0u)
        << from << " -> " << to << " rank " << readers->rank();
  }
  remove_shared(*comm, dir);
}

TEST(CheckpointMpi, Reshard4To2) {
  reshard(4, 2);
}
TEST(CheckpointMpi, Reshard2To4) {
  reshard(2, 4);
}
TEST(CheckpointMpi, Reshard4To3) {
  reshard(4, 3);
}
TEST(CheckpointMpi, Reshard3To1) {
  reshard(3, 1);
}
TEST(CheckpointMpi, Reshard2To1) {
  reshard(2, 1);
}
TEST(CheckpointMpi, Reshard1To2) {
  reshard(1, 2);
}

TEST(CheckpointMpi, OneRankWithANonFiniteValueFailsTheSaveOnEveryRank) {
  auto comm = world();
  const std::string dir = shared_dir(*comm, "ckpt_nan");
  RankState state = testing::make_rank_state(model(), comm->rank(), comm->size());
  testing::fill_rank_state(state, 3);
  const int bad_rank = comm->size() - 1;
  if (comm->rank() == bad_rank) {
    const auto& piece = state.buffers[1].pieces.at(0);
    static_cast<float*>(state.buffers[1].data)[piece.buffer_offset] =
        std::numeric_limits<float>::infinity();
  }
  try {
    save_checkpoint(*comm, request(dir, 3), state.buffers);
    FAIL() << "the save must fail";
  } catch (const comm::AgreedError& e) {
    EXPECT_EQ(e.code(), ExitCode::kCheckpoint);
    EXPECT_NE(e.message().find("refusing to save a non-finite value"), std::string::npos);
  }
  comm->barrier();
  EXPECT_TRUE(committed_steps(dir).empty());
  EXPECT_TRUE(leftover_dirs(dir).empty());
  // The next save goes through.
  save_at(*comm, dir, 4);
  EXPECT_EQ(committed_steps(dir), (std::vector<std::int64_t>{4}));
  remove_shared(*comm, dir);
}

TEST(CheckpointMpi, AsyncSaveWritesTheSnapshotNotLaterValues) {
  auto comm = world();
  const std::string dir = shared_dir(*comm, "ckpt_async");
  AsyncCheckpointer saver(comm::MpiCommunicator::create(MPI_COMM_WORLD));
  RankState state = testing::make_rank_state(model(), comm->rank(), comm->size());
  saver.reserve_staging(state.buffers);
  EXPECT_EQ(saver.staging_bytes(), piece_bytes(state.buffers));

  testing::fill_rank_state(state, 5);
  const AsyncSaveStart first = saver.save(request(dir, 5), state.buffers);
  EXPECT_FALSE(first.previous);
  EXPECT_TRUE(saver.in_flight());
  // Training goes on and changes every value right away, padding included.
  testing::fill_rank_state(state, 6);
  for (auto& s : state.storage) std::fill(s.begin(), s.end(), 123.0f);
  testing::fill_rank_state(state, 6);

  // The next save waits for the first and reports it.
  const AsyncSaveStart second = saver.save(request(dir, 6), state.buffers);
  ASSERT_TRUE(second.previous);
  EXPECT_TRUE(second.previous->committed) << second.previous->error;
  EXPECT_EQ(second.previous->step, 5);
  EXPECT_EQ(second.previous->result.blocking_seconds, first.blocking_seconds);
  std::optional<AsyncSaveOutcome> outcome;
  // Once per "training step", as the trainer polls.
  while (!(outcome = saver.poll(*comm))) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_TRUE(outcome->committed);
  EXPECT_EQ(outcome->step, 6);
  EXPECT_GT(outcome->result.bytes, 0u);
  EXPECT_FALSE(saver.in_flight());
  EXPECT_FALSE(saver.wait());

  RankState loaded = testing::make_rank_state(model(), comm->rank(), comm->size());
  load_checkpoint(*comm, step_dir_path(dir, 5), model().tensors, loaded.buffers, LoadOptions{});
  EXPECT_EQ(testing::count_mismatches(loaded, 5), 0u);
  load_checkpoint(*comm, step_dir_path(dir, 6), model().tensors, loaded.buffers, LoadOptions{});
  EXPECT_EQ(testing::count_mismatches(loaded, 6), 0u);
  remove_shared(*comm, dir);
}

TEST(CheckpointMpi, OverlappedSnapshotHoldsTheValuesAtSaveOnceFenced) {
  auto comm = world();
  const std::string dir = shared_dir(*comm, "ckpt_overlap");
  AsyncCheckpointer saver(comm::MpiCommunicator::create(MPI_COMM_WORLD), SnapshotMode::kOverlapped);
  EXPECT_LT(saver.snapshot_fence(), 0.01);  // nothing in flight
  RankState state = testing::make_rank_state(model(), comm->rank(), comm->size());
  for (std::int64_t step : {21, 22}) {
    testing::fill_rank_state(state, step);
    saver.save(request(dir, step), state.buffers);
    // Forward/backward would read the buffers here; the optimizer step may
    // change them only after the fence.
    saver.snapshot_fence();
    testing::set_pieces(state, -2.0f);
  }
  const auto outcome = saver.wait();
  ASSERT_TRUE(outcome);
  EXPECT_TRUE(outcome->committed) << outcome->error;
  EXPECT_GE(outcome->result.blocking_seconds, 0.0);
  expect_steps_hold_their_values(*comm, dir, {21, 22});
  remove_shared(*comm, dir);
}

// Buffers that are already a snapshot (host copies of device state) are
// written where they are: no staging memory, nothing copied.
TEST(CheckpointMpi, CallerSnapshotIsWrittenInPlace) {
  auto comm = world();
  const std::string dir = shared_dir(*comm, "ckpt_caller_snapshot");
  AsyncCheckpointer saver(comm::MpiCommunicator::create(MPI_COMM_WORLD),
                          SnapshotMode::kCallerSnapshot);
  RankState state = testing::make_rank_state(model(), comm->rank(), comm->size());
  saver.reserve_staging(state.buffers);
  EXPECT_EQ(saver.staging_bytes(), 0u);
  for (std::int64_t step : {31, 32}) {
    testing::fill_rank_state(state, step);
    const AsyncSaveStart start = saver.save(request(dir, step), state.buffers);
    EXPECT_LT(saver.snapshot_fence(), 0.01);  // nothing to wait for
    if (start.previous) {
      EXPECT_TRUE(start.previous->committed) << start.previous->error;
    }
    const auto outcome = saver.wait();  // the caller's buffers are free again
    ASSERT_TRUE(outcome);
    EXPECT_TRUE(outcome->committed) << outcome->error;
  }
  EXPECT_EQ(saver.staging_bytes(), 0u);
  expect_steps_hold_their_values(*comm, dir, {31, 32});
  remove_shared(*comm, dir);
}

TEST(CheckpointMpi, AsyncFailureIsReportedIdenticallyOnEveryRank) {
  auto comm = world();
  const std::string dir = shared_dir(*comm, "ckpt_async_fail");
  AsyncCheckpointer saver(comm::MpiCommunicator::create(MPI_COMM_WORLD));
  RankState state = testing::make_rank_state(model(), comm->rank(), comm->size());
  testing::fill_rank_state(state, 8);
  if (comm->rank() == 0) {
    const auto& piece = state.buffers[0].pieces.at(0);
    static_cast<float*>(state.buffers[0].data)[piece.buffer_offset] =
        std::numeric_limits<float>::quiet_NaN();
  }
  saver.save(request(dir, 8), state.buffers);
  const auto outcome = saver.wait();
  ASSERT_TRUE(outcome);
  EXPECT_FALSE(outcome->committed);
  EXPECT_EQ(outcome->code, ExitCode::kCheckpoint);
  const auto errors = comm::all_gather_text(*comm, outcome->error);
  for (const auto& e : errors) EXPECT_EQ(e, errors[0]);
  EXPECT_NE(errors[0].find("model.embed_tokens.weight element 0"), std::string::npos) << errors[0];
  comm->barrier();
  EXPECT_TRUE(committed_steps(dir).empty());
  remove_shared(*comm, dir);
}

TEST(CheckpointMpi, ResumeFallsBackWhenOneRankFileIsCorrupt) {
  auto comm = world();
  const std::string dir = shared_dir(*comm, "ckpt_fallback");
  save_at(*comm, dir, 1);
  save_at(*comm, dir, 2);
  if (comm->rank() == 0) {
    const std::string file = step_dir_path(dir, 2) + "/" + rank_file_name(comm->size() - 1);
    const auto index = read_index(step_dir_path(dir, 2));
    for (const auto& [name, t] : index.tensors)
      for (const auto& c : t.chunks)
        if (c.file == rank_file_name(comm->size() - 1) && c.length > 10) {
          testing::flip_byte(
              file, testing::dataset_file_offset(file, c.dataset) + (c.dataset_offset + 3) * 4);
          goto flipped;
        }
  flipped:;
  }
  comm->barrier();
  RankState state = testing::make_rank_state(model(), comm->rank(), comm->size());
  const auto loaded =
      resume_checkpoint(*comm, dir, "auto", model().tensors, state.buffers, LoadOptions{});
  ASSERT_TRUE(loaded);
  EXPECT_EQ(loaded->step, 1);
  ASSERT_EQ(loaded->rejected_steps.size(), 1u);
  EXPECT_NE(loaded->rejected_steps[0].find("checksum mismatch"), std::string::npos);
  EXPECT_EQ(testing::count_mismatches(state, 1), 0u);
  remove_shared(*comm, dir);
}

}  // namespace
}  // namespace nss::checkpoint
