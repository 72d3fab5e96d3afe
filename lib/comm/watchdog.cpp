#include "comm/watchdog.h"

#include <chrono>
#include <cstdlib>
#include <optional>
#include <vector>

#include <spdlog/spdlog.h>

#include "comm/hang_diagnosis.h"
#include "comm/mpi_check.h"
#include "core/error.h"
#include "log/logger.h"

namespace nss::comm {
namespace {

constexpr int kAlertTag = 7301;
constexpr int kStatusTag = 7302;
constexpr auto kPoll = std::chrono::milliseconds(50);
// How long ranks wait for each other's status before naming the silent ones.
constexpr double kExchangeSeconds = 10.0;
// Lets every rank finish writing its log before the first one exits.
constexpr auto kGrace = std::chrono::milliseconds(1000);

}  // namespace

Watchdog::Watchdog(std::vector<Communicator*> comms, MPI_Comm world, double timeout_s)
    : watched_(std::move(comms)), timeout_s_(timeout_s) {
  NSS_ASSERT(!watched_.empty(), "comm", "a watchdog needs a communicator to watch");
  NSS_MPI_CHECK(MPI_Comm_dup(world, &comm_));
  MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
  thread_ = std::thread([this] { watch(); });
}

Watchdog::~Watchdog() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized && comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

void Watchdog::watch() {
  int alert = 0;
  MPI_Request alert_request;
  MPI_Irecv(&alert, 1, MPI_INT, MPI_ANY_SOURCE, kAlertTag, comm_, &alert_request);
  while (!stop_) {
    int arrived = 0;
    MPI_Test(&alert_request, &arrived, MPI_STATUS_IGNORE);
    if (arrived) respond(alert, false);
    for (std::size_t i = 0; i < watched_.size(); ++i) {
      const auto snapshot = watched_[i]->tracker().snapshot();
      if (snapshot.in_flight && snapshot.seconds_in_flight > timeout_s_)
        respond(static_cast<int>(i), true);
    }
    std::this_thread::sleep_for(kPoll);
  }
  MPI_Cancel(&alert_request);
  MPI_Wait(&alert_request, MPI_STATUS_IGNORE);
}

void Watchdog::respond(int hung, bool detected_here) {
  if (hung < 0 || hung >= static_cast<int>(watched_.size())) hung = 0;  // a foreign alert
  Communicator& comm = *watched_[static_cast<std::size_t>(hung)];
  const auto snapshot = comm.tracker().snapshot();
  if (detected_here) {
    spdlog::error(
        "[comm] {} #{}{} has not finished after {:.1f} s; asking every rank for its state",
        collective_name(snapshot.current.kind), snapshot.current.seq,
        comm.group() == "world" ? std::string() : " in " + comm.group(),
        snapshot.seconds_in_flight);
  }
  std::vector<MPI_Request> requests;
  if (detected_here) {
    for (int r = 0; r < size_; ++r) {
      if (r == rank_) continue;
      requests.emplace_back();
      MPI_Isend(&hung, 1, MPI_INT, r, kAlertTag, comm_, &requests.back());
    }
  }
  const RankStatus mine = make_rank_status(rank_, snapshot, comm.group());
  std::vector<RankStatus> received(static_cast<std::size_t>(size_));
  std::vector<MPI_Request> receives(static_cast<std::size_t>(size_), MPI_REQUEST_NULL);
  for (int r = 0; r < size_; ++r) {
    if (r == rank_) continue;
    MPI_Irecv(&received[r], sizeof(RankStatus), MPI_BYTE, r, kStatusTag, comm_, &receives[r]);
    requests.emplace_back();
    MPI_Isend(&mine, sizeof(RankStatus), MPI_BYTE, r, kStatusTag, comm_, &requests.back());
  }

  std::vector<std::optional<RankStatus>> statuses(static_cast<std::size_t>(size_));
  statuses[rank_] = mine;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(kExchangeSeconds);
  int missing = size_ - 1;
  while (missing > 0 && std::chrono::steady_clock::now() < deadline) {
    for (int r = 0; r < size_; ++r) {
      if (receives[r] == MPI_REQUEST_NULL) continue;
      int done = 0;
      MPI_Test(&receives[r], &done, MPI_STATUS_IGNORE);
      if (done) {
        statuses[r] = received[r];
        --missing;
      }
    }
    for (auto& request : requests) {
      int done = 0;
      if (request != MPI_REQUEST_NULL) MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }

  for (const auto& line : diagnose_hang(statuses, timeout_s_)) spdlog::error("[comm] {}", line);
  spdlog::error("[comm] ending the job with exit code 6 (collective timeout)");
  // After the exchange: the diagnosis needed this rank's state as it hung.
  for (Communicator* watched : watched_) watched->abort();
  log::flush();
  std::this_thread::sleep_for(kGrace);
  log::flush();
  // Everyone answered: each rank leaves on its own with code 6. Otherwise a
  // silent rank may be stuck inside MPI, and only MPI_Abort can end it.
  if (missing > 0) MPI_Abort(MPI_COMM_WORLD, static_cast<int>(ExitCode::kCollectiveTimeout));
  std::_Exit(static_cast<int>(ExitCode::kCollectiveTimeout));
}

}  // namespace nss::comm
