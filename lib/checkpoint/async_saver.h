// Asynchronous saves: at a step boundary the pieces are copied into staging
// buffers (a true snapshot: whatever the caller does to its buffers afterwards
// never reaches the checkpoint), and a writer thread runs save_checkpoint() —
// I/O in bounded slices, then the commit protocol — on a communicator of its
// own, so its collectives never interleave with training's. At most one save
// is in flight; the next save() waits for it.
//
// Snapshot modes: kCopyInSave copies before save() returns. kOverlapped lets
// the writer thread copy while training runs the next forward/backward (which
// only read the master shards and moments); the caller must call
// snapshot_fence() before it changes any saved buffer (the optimizer step),
// and is blocked only if the copy is not finished by then. kCallerSnapshot
// copies nothing: the buffers are already a snapshot (host copies of device
// state) that the caller leaves alone until the save's outcome is delivered.
//
// Outcomes are delivered exactly once, identically on every rank, at points
// every rank reaches together: the next save(), poll() or wait().
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
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
  SaveResult result;              // when committed; blocking_seconds = save() + snapshot_fence()
  ExitCode code = ExitCode::kOk;  // when not: kCheckpoint for I/O, non-finite values, ...
  std::string error;              // when not: why, naming the component
};

/// What save() did: how long the caller was blocked, and the outcome of the
/// previous save if save() had to wait for it.
struct AsyncSaveStart {
  double blocking_seconds = 0;
  std::optional<AsyncSaveOutcome> previous;
};

enum class SnapshotMode {
  kCopyInSave,      // save() returns after the copy: buffers may change right away
  kOverlapped,      // the writer copies; buffers may change after snapshot_fence()
  kCallerSnapshot,  // no copy: buffers may change once the outcome is delivered
};

class AsyncCheckpointer {
 public:
  /// `writer_comm` must be the writer's own communicator with the same ranks as
  /// training (e.g. comm::MpiCommunicator::create(MPI_COMM_WORLD), created
  /// collectively); MPI must run with MPI_THREAD_MULTIPLE.
  explicit AsyncCheckpointer(std::unique_ptr<comm::Communicator> writer_comm,
                             SnapshotMode mode = SnapshotMode::kCopyInSave);
  /// Waits for a save in flight (its failure is logged).
  ~AsyncCheckpointer();
  AsyncCheckpointer(const AsyncCheckpointer&) = delete;
  AsyncCheckpointer& operator=(const AsyncCheckpointer&) = delete;

  /// Allocates and touches staging memory for `buffers` ahead of the first
  /// save, so that save's blocking time is only the copy (none for kCallerSnapshot).
  void reserve_staging(const std::vector<ShardBuffer>& buffers);

  /// Every rank at the same step: waits for the save in flight, snapshots the
  /// pieces of `buffers` (kOverlapped: starts snapshotting them) and starts
  /// writing them in the background.
  AsyncSaveStart save(const SaveRequest& request, const std::vector<ShardBuffer>& buffers);

  /// Returns once the snapshot of the save in flight is complete, so the saved
  /// buffers may change; returns the seconds it waited (0 in kCopyInSave mode
  /// or when no save is in flight). Call it before every optimizer step.
  double snapshot_fence();

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
  void allocate_staging(const std::vector<ShardBuffer>& buffers);
  void stage(const std::vector<ShardBuffer>& buffers);
  void run_writer();
  void mark_snapshot_taken();

  struct Staging {
    std::unique_ptr<char[]> data;
    std::uint64_t bytes = 0;
  };

  std::unique_ptr<comm::Communicator> writer_comm_;
  SnapshotMode mode_;
  std::vector<Staging> staging_;
  std::vector<ShardBuffer> sources_;  // kOverlapped: the caller's buffers, until copied
  std::vector<ShardBuffer> staged_;
  SaveRequest request_;
  double blocking_seconds_ = 0;
  std::mutex snapshot_mutex_;
  std::condition_variable snapshot_taken_cv_;
  bool snapshot_taken_ = true;
  AsyncSaveOutcome outcome_;
  std::atomic<bool> finished_{false};
  std::thread thread_;
};

}  // namespace nss::checkpoint
