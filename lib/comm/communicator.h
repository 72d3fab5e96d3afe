// One collective-communication interface on raw buffers, several backends
// (MPI on host memory, NCCL on device memory, a local stand-in for preflight).
// No libtorch here: callers pass (pointer, element count, DType).
//
// The public methods check arguments, account bytes and time, and keep the
// sequence numbers the hang watchdog reads; backends implement the do_*
// hooks, so no backend can skip the bookkeeping.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "comm/collective_tracker.h"
#include "core/dtype.h"

namespace nss::comm {

enum class ReduceOp { kSum, kMax, kMin };

/// A collective started by Communicator::start_all_gather (its sequence number).
using CollectiveTicket = std::uint64_t;

/// Calls, bytes and seconds of one collective kind. Bytes follow the
/// nccl-tests bus-bandwidth convention: all_gather and reduce_scatter count the
/// full buffer x (N-1)/N, all_reduce 2 x buffer x (N-1)/N, broadcast the buffer.
struct CollectiveTotals {
  std::uint64_t calls = 0;
  double bytes = 0;
  double seconds = 0;
};

struct CommStats {
  std::array<CollectiveTotals, kCollectiveKinds> by_kind{};

  const CollectiveTotals& operator[](CollectiveKind kind) const {
    return by_kind[static_cast<int>(kind)];
  }
  /// Sum of bytes over every kind.
  double total_bytes() const;
  /// Sum of seconds over every kind.
  double total_seconds() const;
  /// Element-wise difference (this - earlier), for per-step figures.
  CommStats since(const CommStats& earlier) const;
};

class Communicator {
 public:
  virtual ~Communicator() = default;
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  /// Rank among the processes of this node, and their number.
  int local_rank() const { return local_rank_; }
  int local_size() const { return local_size_; }

  /// Which ranks these are, as the hang watchdog names them: "world", or a
  /// group of hybrid sharding ("shard group 1 (ranks 4-7)").
  const std::string& group() const { return group_; }
  void set_group(std::string group) { group_ = std::move(group); }

  /// Backend name: "mpi", "nccl", "local".
  virtual const char* backend() const = 0;

  /// Called by the hang watchdog (another thread) just before it ends the job:
  /// releases collectives stuck in the backend (NCCL: ncclCommAbort). Nothing
  /// for host backends, whose processes simply end.
  virtual void abort() {}

  /// Gathers `count` elements from every rank into `full` (size() x count, rank order).
  void all_gather(const void* shard, void* full, std::size_t count, DType dtype);

  /// all_gather() that returns before the result is ready where the backend
  /// can (NCCL: enqueued on its stream, so it overlaps the compute issued
  /// before wait()); host backends finish it here. Until wait(ticket), `full`
  /// must not be read and neither buffer freed or written.
  CollectiveTicket start_all_gather(const void* shard, void* full, std::size_t count, DType dtype);

  /// Orders this rank's compute issued from now on after collective `ticket`
  /// (NCCL: the compute stream waits for it on the device, the host does not;
  /// host backends: nothing left to do).
  void wait(CollectiveTicket ticket);

  /// Returns when every collective issued so far has finished (NCCL: the host
  /// waits for its stream), so that none looks in flight to the watchdog while
  /// the rank does other work (evaluation, checkpoints).
  void finish_all() { do_finish_all(); }

  /// Sums `full` (size() x count elements) over ranks; this rank keeps its slice in `shard`.
  /// Compute issued afterwards sees the result; on NCCL the host does not wait.
  void reduce_scatter(const void* full, void* shard, std::size_t count, DType dtype);

  /// Reduces `buffer` in place over all ranks.
  void all_reduce(void* buffer, std::size_t count, DType dtype, ReduceOp op);

  /// all_reduce() (sum) of a buffer that only compute issued afterwards
  /// reads, like reduce_scatter()'s result: on NCCL the host does not wait
  /// (hybrid sharding's gradient shards, summed over the replicas while the
  /// next unit's backward runs); host backends finish it here.
  void all_reduce_for_compute(void* buffer, std::size_t count, DType dtype);

  /// Copies `root`'s buffer to every rank.
  void broadcast(void* buffer, std::size_t count, DType dtype, int root);

  /// Waits until every rank arrives.
  void barrier();

  /// Typed conveniences.
  template <class T>
  void all_reduce(T* values, std::size_t count, ReduceOp op) {
    all_reduce(values, count, dtype_of<T>(), op);
  }
  template <class T>
  void broadcast(T* values, std::size_t count, int root) {
    broadcast(values, count, dtype_of<T>(), root);
  }

  /// Totals since construction or the last reset_stats().
  CommStats stats() const { return stats_; }
  void reset_stats() { stats_ = CommStats{}; }

  /// Sequence numbers and labels of collectives, read by the watchdog.
  CollectiveTracker& tracker() { return tracker_; }

 protected:
  Communicator(int rank, int size, int local_rank, int local_size);

  virtual void do_all_gather(const void* shard, void* full, std::size_t count, DType dtype) = 0;
  virtual void do_reduce_scatter(const void* full, void* shard, std::size_t count, DType dtype) = 0;
  virtual void do_all_reduce(void* buffer, std::size_t count, DType dtype, ReduceOp op) = 0;
  /// See all_reduce_for_compute(); a backend that returns before it finishes
  /// says so with all_reduce_for_compute_returns_early().
  virtual void do_all_reduce_for_compute(void* buffer, std::size_t count, DType dtype) {
    do_all_reduce(buffer, count, dtype, ReduceOp::kSum);
  }
  virtual bool all_reduce_for_compute_returns_early() const { return false; }
  virtual void do_broadcast(void* buffer, std::size_t count, DType dtype, int root) = 0;
  virtual void do_barrier() = 0;
  /// False when the backend returns from collectives of `kind` before they
  /// finish; it then calls tracker().finish_through() when it sees them done.
  virtual bool finishes_on_return(CollectiveKind) const { return true; }
  /// See wait(); called for every ticket, finished or not.
  virtual void do_wait(CollectiveTicket) {}
  virtual void do_finish_all() {}
  /// Sequence number of the collective a do_* hook is issuing.
  std::uint64_t issuing_seq() const { return issuing_seq_; }

 private:
  /// `finishes`: the collective is over when `fn` returns (else the backend
  /// reports it with tracker().finish_through()).
  template <class Fn>
  void run(CollectiveKind kind, double full_bytes, double bus_bytes, bool finishes, Fn&& fn);

  int rank_, size_, local_rank_, local_size_;
  std::string group_ = "world";
  std::uint64_t issuing_seq_ = 0;
  CommStats stats_;
  CollectiveTracker tracker_;
};

/// Labels the collectives issued in a scope for the hang diagnostic, e.g.
/// `CollectiveLabel label(comm, "unit 17 backward");`. Scopes nest.
class CollectiveLabel {
 public:
  CollectiveLabel(Communicator& comm, std::string label) : tracker_(comm.tracker()) {
    tracker_.push_label(std::move(label));
  }
  ~CollectiveLabel() { tracker_.pop_label(); }
  CollectiveLabel(const CollectiveLabel&) = delete;
  CollectiveLabel& operator=(const CollectiveLabel&) = delete;

 private:
  CollectiveTracker& tracker_;
};

}  // namespace nss::comm
