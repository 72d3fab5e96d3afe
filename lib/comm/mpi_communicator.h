// Collectives over MPI on host memory. bfloat16/float16 reductions use
// user-defined MPI operations (MPI has no 16-bit float types).
#pragma once

#include <memory>

#include <mpi.h>

#include "comm/communicator.h"

namespace nss::comm {

class MpiCommunicator final : public Communicator {
 public:
  /// Duplicates `parent` so that our collectives never match anyone else's (collective).
  static std::unique_ptr<MpiCommunicator> create(MPI_Comm parent);
  ~MpiCommunicator() override;

  const char* backend() const override { return "mpi"; }

  /// The duplicated communicator (for the watchdog and agreement helpers).
  MPI_Comm handle() const { return comm_; }

 protected:
  void do_all_gather(const void* shard, void* full, std::size_t count, DType dtype) override;
  void do_reduce_scatter(const void* full, void* shard, std::size_t count, DType dtype) override;
  void do_all_reduce(void* buffer, std::size_t count, DType dtype, ReduceOp op) override;
  void do_broadcast(void* buffer, std::size_t count, DType dtype, int root) override;
  void do_barrier() override;

 private:
  MpiCommunicator(MPI_Comm comm, int rank, int size, int local_rank, int local_size);

  MPI_Comm comm_;
};

}  // namespace nss::comm
