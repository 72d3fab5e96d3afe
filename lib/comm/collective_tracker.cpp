#include "comm/collective_tracker.h"

namespace nss::comm {

const char* collective_name(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::kAllGather:
      return "all_gather";
    case CollectiveKind::kReduceScatter:
      return "reduce_scatter";
    case CollectiveKind::kAllReduce:
      return "all_reduce";
    case CollectiveKind::kBroadcast:
      return "broadcast";
    case CollectiveKind::kBarrier:
      return "barrier";
  }
  return "unknown";
}

std::uint64_t CollectiveTracker::begin(CollectiveKind kind, double bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  last_started_ = {++started_, kind, bytes, labels_.empty() ? std::string() : labels_.back()};
  in_flight_.push_back({last_started_, Clock::now()});
  return last_started_.seq;
}

void CollectiveTracker::finish_through(std::uint64_t seq) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (in_flight_.empty() || in_flight_.front().record.seq > seq) return;
  while (!in_flight_.empty() && in_flight_.front().record.seq <= seq) {
    last_finished_ = std::move(in_flight_.front().record);
    in_flight_.pop_front();
  }
  finished_ = last_finished_.seq;
  finished_at_ = Clock::now();
}

CollectiveTracker::Snapshot CollectiveTracker::snapshot() const {
  std::lock_guard<std::mutex> lock(mutex_);
  Snapshot s;
  s.started = started_;
  s.finished = finished_;
  s.in_flight = !in_flight_.empty();
  const auto now = Clock::now();
  s.seconds_in_flight =
      s.in_flight ? std::chrono::duration<double>(now - in_flight_.front().started_at).count() : 0;
  s.seconds_since_finish = std::chrono::duration<double>(now - finished_at_).count();
  s.current = s.in_flight ? in_flight_.front().record : last_started_;
  s.last_finished = last_finished_;
  return s;
}

std::string CollectiveTracker::label() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return labels_.empty() ? std::string() : labels_.back();
}

void CollectiveTracker::push_label(std::string label) {
  std::lock_guard<std::mutex> lock(mutex_);
  labels_.push_back(std::move(label));
}

void CollectiveTracker::pop_label() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!labels_.empty()) labels_.pop_back();
}

}  // namespace nss::comm
