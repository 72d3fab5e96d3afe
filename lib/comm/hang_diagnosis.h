// Turns every rank's collective bookkeeping into a sentence a user can act
// on: which rank is behind, what it last finished, what the others wait in.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "comm/collective_tracker.h"

namespace nss::comm {

/// One rank's state as exchanged by the watchdog (fixed size, sent as bytes).
struct RankStatus {
  std::int32_t rank = 0;
  std::int32_t pid = 0;
  std::int32_t in_flight = 0;
  std::int32_t current_kind = 0;
  std::int32_t finished_kind = 0;
  std::uint64_t started = 0;
  std::uint64_t finished = 0;
  std::uint64_t current_seq = 0;  // the oldest collective in flight (several may be)
  double seconds_in_flight = 0;
  double seconds_since_finish = 0;
  double current_bytes = 0;
  char current_label[96] = {};
  char finished_label[96] = {};
  char host[64] = {};
  char group[64] = {};  // Communicator::group() of the collectives above
};

/// This process's status from the tracker of its communicator over `group`
/// ("world", or a hybrid-sharding group, named in the diagnosis).
RankStatus make_rank_status(int rank, const CollectiveTracker::Snapshot& snapshot,
                            const std::string& group = "world");

/// Diagnosis lines; `statuses[r]` is empty when rank r did not answer.
std::vector<std::string> diagnose_hang(const std::vector<std::optional<RankStatus>>& statuses,
                                       double timeout_s);

/// "0-4,6,7" style list of ranks.
std::string format_rank_list(const std::vector<int>& ranks);

}  // namespace nss::comm
