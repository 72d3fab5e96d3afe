// Hang watchdog: a thread per rank watches the collective in flight on one
// communicator. When one exceeds the timeout, that rank alerts every other
// rank's watchdog over a private duplicate of the world communicator; all of
// them exchange their last started/finished collectives, log the same
// diagnosis ("rank 5 is behind: last finished all_gather #1234 (unit 17
// backward)"), and the job ends with exit code 6 on every rank.
#pragma once

#include <atomic>
#include <thread>

#include <mpi.h>

#include "comm/communicator.h"

namespace nss::comm {

class Watchdog {
 public:
  /// Starts watching `comm` (collective over `world`, which it duplicates).
  Watchdog(Communicator& comm, MPI_Comm world, double timeout_s);
  /// Stops the thread (collective: frees the duplicated communicator).
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

 private:
  void watch();
  [[noreturn]] void respond(bool detected_here);

  Communicator& watched_;
  CollectiveTracker& tracker_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
  double timeout_s_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace nss::comm
