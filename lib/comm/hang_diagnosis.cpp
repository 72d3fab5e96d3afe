#include "comm/hang_diagnosis.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <unistd.h>

#include "core/units.h"

namespace nss::comm {
namespace {

void copy_text(char* out, std::size_t size, const std::string& text) {
  std::strncpy(out, text.c_str(), size - 1);
  out[size - 1] = '\0';
}

// "all_gather #12 (unit 3 forward)", plus " in shard group 1 (ranks 4-7)"
// for a collective of a hybrid-sharding group.
std::string describe(int kind, std::uint64_t seq, const char* label, const char* group) {
  std::string text =
      std::string(collective_name(static_cast<CollectiveKind>(kind))) + " #" + std::to_string(seq);
  if (label[0] != '\0') text += " (" + std::string(label) + ")";
  if (group[0] != '\0' && std::strcmp(group, "world") != 0) text += " in " + std::string(group);
  return text;
}

std::string last_finished(const RankStatus& s) {
  if (s.finished == 0) return "no collective finished yet";
  return "last finished " + describe(s.finished_kind, s.finished, s.finished_label, s.group);
}

std::string where(const RankStatus& s) {
  return "rank " + std::to_string(s.rank) + " (host " + s.host + ", pid " + std::to_string(s.pid) +
         ")";
}

std::string activity(const RankStatus& s) {
  if (!s.in_flight) return "outside any collective (" + last_finished(s) + ")";
  return "in " + describe(s.current_kind, s.current_seq, s.current_label, s.group);
}

}  // namespace

RankStatus make_rank_status(int rank, const CollectiveTracker::Snapshot& snapshot,
                            const std::string& group) {
  RankStatus s;
  s.rank = rank;
  s.pid = static_cast<std::int32_t>(::getpid());
  s.in_flight = snapshot.in_flight ? 1 : 0;
  s.current_kind = static_cast<std::int32_t>(snapshot.current.kind);
  s.finished_kind = static_cast<std::int32_t>(snapshot.last_finished.kind);
  s.started = snapshot.started;
  s.finished = snapshot.finished;
  s.current_seq = snapshot.current.seq;
  s.seconds_in_flight = snapshot.seconds_in_flight;
  s.seconds_since_finish = snapshot.seconds_since_finish;
  s.current_bytes = snapshot.current.bytes;
  copy_text(s.current_label, sizeof s.current_label, snapshot.current.label);
  copy_text(s.finished_label, sizeof s.finished_label, snapshot.last_finished.label);
  char host[64] = {};
  ::gethostname(host, sizeof host - 1);
  copy_text(s.host, sizeof s.host, host);
  copy_text(s.group, sizeof s.group, group);
  return s;
}

std::string format_rank_list(const std::vector<int>& ranks) {
  std::vector<int> sorted = ranks;
  std::sort(sorted.begin(), sorted.end());
  std::string text;
  for (std::size_t i = 0; i < sorted.size();) {
    std::size_t j = i;
    while (j + 1 < sorted.size() && sorted[j + 1] == sorted[j] + 1) ++j;
    if (!text.empty()) text += ",";
    text += std::to_string(sorted[i]);
    if (j > i) text += (j == i + 1 ? "," : "-") + std::to_string(sorted[j]);
    i = j + 1;
  }
  return text;
}

std::vector<std::string> diagnose_hang(const std::vector<std::optional<RankStatus>>& statuses,
                                       double timeout_s) {
  std::vector<std::string> lines;
  std::vector<const RankStatus*> answered;
  std::vector<int> silent;
  for (std::size_t r = 0; r < statuses.size(); ++r) {
    if (statuses[r])
      answered.push_back(&*statuses[r]);
    else
      silent.push_back(static_cast<int>(r));
  }
  lines.push_back("collective timeout: a collective made no progress for " +
                  format_seconds(timeout_s, 1) + " (parallel.collective_timeout_s)");

  if (!answered.empty()) {
    std::uint64_t front = 0;
    for (const auto* s : answered) front = std::max(front, s->started);
    std::vector<const RankStatus*> leaders, laggards;
    for (const auto* s : answered) (s->started == front ? leaders : laggards).push_back(s);

    if (!laggards.empty()) {
      // Ranks that have not entered the collective the leaders wait in. A
      // leader outside any collective finished it: with hybrid sharding its
      // group's peers were all there.
      const RankStatus* lead = nullptr;
      std::vector<int> lead_ranks;
      for (const auto* s : leaders) {
        if (!s->in_flight) continue;
        lead_ranks.push_back(s->rank);
        if (!lead) lead = s;
      }
      if (lead)
        lines.push_back(
            (lead_ranks.size() == 1 ? "rank " : "ranks ") + format_rank_list(lead_ranks) +
            (lead_ranks.size() == 1 ? " is waiting in " : " are waiting in ") +
            describe(lead->current_kind, lead->current_seq, lead->current_label, lead->group) +
            " for " + format_seconds(lead->seconds_in_flight, 1));
      for (const auto* s : laggards) {
        std::string line = where(*s) + " is behind: " + last_finished(*s);
        line += s->in_flight
                    ? "; it is inside " +
                          describe(s->current_kind, s->current_seq, s->current_label, s->group) +
                          " for " + format_seconds(s->seconds_in_flight, 1)
                    : "; it has not entered a collective for " +
                          format_seconds(s->seconds_since_finish, 1) +
                          " (busy, stuck in computation or I/O, or it skipped a "
                          "collective)";
        lines.push_back(line);
      }
    } else {
      // Everyone entered the same sequence number: same operation (stuck in
      // the transport) or different ones (a rank-dependent branch).
      std::map<int, std::vector<const RankStatus*>> by_kind;
      for (const auto* s : answered) by_kind[s->in_flight ? s->current_kind : -1].push_back(s);
      const std::vector<const RankStatus*>* majority = nullptr;
      for (const auto& entry : by_kind)
        if (!majority || entry.second.size() > majority->size()) majority = &entry.second;
      const RankStatus& m = *majority->front();
      if (by_kind.size() == 1 && m.in_flight) {
        lines.push_back("all " + std::to_string(answered.size()) + " answering ranks are inside " +
                        describe(m.current_kind, m.current_seq, m.current_label, m.group) +
                        " for " + format_seconds(m.seconds_in_flight, 1) +
                        ": the collective itself is stuck (network, transport or a dead peer)");
      } else if (by_kind.size() == 1) {
        lines.push_back("no answering rank is inside a collective; " + last_finished(m));
      } else {
        for (const auto* s : answered) {
          if (std::find(majority->begin(), majority->end(), s) != majority->end()) continue;
          lines.push_back(where(*s) + " diverged: it is " + activity(*s) +
                          " where the others are " + activity(m) +
                          " (a rank-dependent branch issued different collectives)");
        }
      }
    }
  }
  if (!silent.empty())
    lines.push_back("ranks " + format_rank_list(silent) +
                    " did not answer the watchdog (process dead, or stuck inside the MPI library)");
  return lines;
}

}  // namespace nss::comm
