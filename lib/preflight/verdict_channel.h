// The verdict's way from rank 0 to every rank: one MPI_Ibcast of a fixed-size
// message on a private duplicate of the world communicator. The other ranks
// poll it against a deadline, so a rank 0 that never answers (stuck, or busy
// far longer than allowed) cannot make them hang.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include <mpi.h>

#include "preflight/report.h"

namespace nss::preflight {

class VerdictChannel {
 public:
  /// Collective over `world`, which it duplicates; `root` sends the verdict.
  VerdictChannel(MPI_Comm world, int root);
  ~VerdictChannel();
  VerdictChannel(const VerdictChannel&) = delete;
  VerdictChannel& operator=(const VerdictChannel&) = delete;

  /// Root only: sends the verdict (reason and hint are cut to 2000 bytes each).
  void send(const Verdict& verdict);

  /// Other ranks: the verdict, or nullopt when it did not arrive within
  /// `timeout_s`; calling again keeps waiting for the same message.
  std::optional<Verdict> receive(double timeout_s);

 private:
  struct Message {
    std::int32_t go = 0;
    std::int32_t code = 0;
    char reason[2048] = {};
    char hint[2048] = {};
  };

  MPI_Comm comm_ = MPI_COMM_NULL;
  int root_ = 0;
  int rank_ = 0;
  std::unique_ptr<Message> message_ = std::make_unique<Message>();
  MPI_Request request_ = MPI_REQUEST_NULL;
  bool posted_ = false;
};

}  // namespace nss::preflight
