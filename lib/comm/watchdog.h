// Hang watchdog: a thread per rank watches the collectives in flight on its
// communicators (the world's, and under hybrid sharding its shard and replica
// groups'). When one exceeds the timeout, that rank alerts every other
// rank's watchdog over a private duplicate of the world communicator, naming
// which of the watched communicators hung; all of them exchange their last
// started/finished collectives on that one, log the same diagnosis ("rank 5
// is behind: last finished all_gather #1234 (unit 17 backward) in shard
// group 1 (ranks 4-7)"), and the job ends with exit code 6 on every rank.
#pragma once

#include <atomic>
#include <thread>
#include <vector>

#include <mpi.h>

#include "comm/communicator.h"

namespace nss::comm {

class Watchdog {
 public:
  /// Starts watching `comms` (collective over `world`, which it duplicates).
  /// Every rank passes the same number of communicators in the same order.
  Watchdog(std::vector<Communicator*> comms, MPI_Comm world, double timeout_s);
  Watchdog(Communicator& comm, MPI_Comm world, double timeout_s)
      : Watchdog(std::vector<Communicator*>{&comm}, world, timeout_s) {}
  /// Stops the thread (collective: frees the duplicated communicator).
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

 private:
  void watch();
  /// `hung`: index into watched_ of the communicator whose collective timed out.
  [[noreturn]] void respond(int hung, bool detected_here);

  std::vector<Communicator*> watched_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
  double timeout_s_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace nss::comm
