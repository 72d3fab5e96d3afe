// Asynchronous saves: at a step boundary the pieces are copied into staging
// buffers (a true snapshot: whatever the caller does to its buffers afterwards
// never reaches the checkpoint), and a writer thread runs save_checkpoint() —
// I/O in bounded slices, then the commit protocol — on a communicator of its
// own, so its collectives never interleave with training's. At most one save
// is in flight; the next save() waits for it.
//
// Outcomes are delivered exactly once, identically on every rank, at points
// every rank reaches together: the next save(), poll() or wait().
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "checkpoint/save.h"
#include "comm/communicator.h"
#include "core/error.h"

namespace nss::checkpoint {

/// How one asynchronous save ended (the same on every rank).
struct AsyncSaveOutcome {
  std::int64_t step = 0;
  bool committed = false;
  SaveResult result;              // when committed; blocking_seconds = what save() waited
  ExitCode code = ExitCode::kOk;  // when not: kCheckpoint for I/O, non-finite values, ...
  std::string error;              // when not: why, naming the component
};

/// What save() did: how long the caller was blocked, and the outcome of the
/// previous save if save() had to wait for it.
struct AsyncSaveStart {
  double blocking_seconds = 0;
  std::optional<AsyncSaveOutcome> previous;
};

class AsyncCheckpointer {
 public:
  /// `writer_comm` must be the writer's own communicator with the same ranks as
  /// training (e.g. comm::MpiCommunicator::create(MPI_COMM_WORLD), created
  /// collectively); MPI must run with MPI_THREAD_MULTIPLE.
  explicit AsyncCheckpointer(std::unique_ptr<comm::Communicator> writer_comm);
  /// Waits for a save in flight (its failure is logged).
  ~AsyncCheckpointer();
  AsyncCheckpointer(const AsyncCheckpointer&) = delete;
  AsyncCheckpointer& operator=(const AsyncCheckpointer&) = delete;

  /// Allocates and touches staging memory for `buffers` ahead of the first
  /// save, so that save's blocking time is only the copy.
  void reserve_staging(const std::vector<ShardBuffer>& buffers);

  /// Every rank at the same step: waits for the save in flight, snapshots the
  /// pieces of `buffers` and starts writing them in the background.
  AsyncSaveStart save(const SaveRequest& request, const std::vector<ShardBuffer>& buffers);

  /// Collective over `training_comm` (one tiny all-reduce): the outcome of the
  /// save in flight once every rank's writer has finished, else nullopt.
  std::optional<AsyncSaveOutcome> poll(comm::Communicator& training_comm);

  /// Blocks until the save in flight ends; nullopt when none was in flight.
  /// Call it before exiting so that the last save is complete.
  std::optional<AsyncSaveOutcome> wait();

  /// True while a save has been started and its outcome not yet delivered.
  bool in_flight() const { return thread_.joinable(); }

  /// Bytes of staging memory held (for the memory model).
  std::uint64_t staging_bytes() const;

 private:
  void stage(const std::vector<ShardBuffer>& buffers);
  void run_writer();

  struct Staging {
    std::unique_ptr<char[]> data;
    std::uint64_t bytes = 0;
  };

  std::unique_ptr<comm::Communicator> writer_comm_;
  std::vector<Staging> staging_;
  std::vector<ShardBuffer> staged_;
  SaveRequest request_;
  double blocking_seconds_ = 0;
  AsyncSaveOutcome outcome_;
  std::atomic<bool> finished_{false};
  std::thread thread_;
};

}  // namespace nss::checkpoint
