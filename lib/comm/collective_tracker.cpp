#include "comm/collective_tracker.h"

namespace nss::comm {

const char* collective_name(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::kAllGather: return "all_gather";
    case CollectiveKind::kReduceScatter: return "reduce_scatter";
    case CollectiveKind::kAllReduce: return "all_reduce";
    case CollectiveKind::kBroadcast: return "broadcast";
    case CollectiveKind::kBarrier: return "barrier";
  }
  return "unknown";
}

std::uint64_t CollectiveTracker::begin(CollectiveKind kind, double bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  current_.seq = ++started_;
  current_.kind = kind;
  current_.bytes = bytes;
  current_.label = labels_.empty() ? std::string() : labels_.back();
  started_at_ = Clock::now();
  return current_.seq;
}

void CollectiveTracker::end() {
  std::lock_guard<std::mutex> lock(mutex_);
  finished_ = started_;
  last_finished_ = current_;
  finished_at_ = Clock::now();
}

CollectiveTracker::Snapshot CollectiveTracker::snapshot() const {
  std::lock_guard<std::mutex> lock(mutex_);
  Snapshot s;
  s.started = started_;
  s.finished = finished_;
  s.in_flight = started_ != finished_;
  const auto now = Clock::now();
  s.seconds_in_flight = s.in_flight ? std::chrono::duration<double>(now - started_at_).count() : 0;
  s.seconds_since_finish = std::chrono::duration<double>(now - finished_at_).count();
  s.current = current_;
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
