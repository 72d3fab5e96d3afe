// Bookkeeping of the collectives a communicator has started and finished:
// sequence numbers, kind, bytes and the caller's label. Several may be in
// flight (NCCL returns once a collective is enqueued on its stream); they
// finish in the order they started. The hang watchdog reads it from its own
// thread, so every access is under one mutex (a collective costs microseconds
// at least; the lock costs nanoseconds).
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

namespace nss::comm {

enum class CollectiveKind : std::int32_t {
  kAllGather,
  kReduceScatter,
  kAllReduce,
  kBroadcast,
  kBarrier,
};
constexpr int kCollectiveKinds = 5;

/// "all_gather", "reduce_scatter", ...
const char* collective_name(CollectiveKind kind);

/// One collective as the watchdog reports it.
struct CollectiveRecord {
  std::uint64_t seq = 0;  // 1-based; 0 = none yet
  CollectiveKind kind = CollectiveKind::kBarrier;
  double bytes = 0;  // full gathered/unreduced buffer size
  std::string label;
};

class CollectiveTracker {
 public:
  using Clock = std::chrono::steady_clock;

  /// Marks the start of the next collective; returns its sequence number.
  std::uint64_t begin(CollectiveKind kind, double bytes);

  /// Marks every collective up to and including `seq` as finished.
  void finish_through(std::uint64_t seq);

  struct Snapshot {
    std::uint64_t started = 0;
    std::uint64_t finished = 0;  // the highest finished sequence number
    bool in_flight = false;
    double seconds_in_flight = 0;     // of the oldest in flight, when in_flight
    double seconds_since_finish = 0;  // since the last finish (or construction)
    CollectiveRecord current;         // the oldest in flight, else the last started
    CollectiveRecord last_finished;
  };
  Snapshot snapshot() const;

  /// Innermost label of the scope stack ("unit 3 backward"), or "".
  std::string label() const;
  void push_label(std::string label);
  void pop_label();

 private:
  struct InFlight {
    CollectiveRecord record;
    Clock::time_point started_at;
  };

  mutable std::mutex mutex_;
  std::uint64_t started_ = 0;
  std::uint64_t finished_ = 0;
  std::deque<InFlight> in_flight_;  // oldest first
  CollectiveRecord last_started_;
  CollectiveRecord last_finished_;
  Clock::time_point finished_at_ = Clock::now();
  std::vector<std::string> labels_;
};

}  // namespace nss::comm
