// One process pretending to be rank 0 of `world_size`, so the preflight can
// run the real sharded step shape (same buffer sizes, same byte accounting)
// on rank 0 alone. It models memory and traffic, not values: all_gather
// replicates the local shard into every slot, reduce_scatter keeps rank 0's
// slice, all_reduce and broadcast leave the buffer as it is. Buffers are
// host memory unless the caller passes a copy function for its device (the
// preflight's synthetic step on a GPU copies with libtorch).
#pragma once

#include <functional>

#include "comm/communicator.h"

namespace nss::comm {

class LocalCommunicator final : public Communicator {
 public:
  /// Copies `bytes` from `source` to `target` (never the same or overlapping buffers).
  using CopyBytes = std::function<void(void* target, const void* source, std::size_t bytes)>;

  /// `copy` moves bytes within the buffers' memory (default: std::memmove, host memory).
  explicit LocalCommunicator(int world_size, CopyBytes copy = {});

  const char* backend() const override { return "local"; }

 protected:
  void do_all_gather(const void* shard, void* full, std::size_t count, DType dtype) override;
  void do_reduce_scatter(const void* full, void* shard, std::size_t count, DType dtype) override;
  void do_all_reduce(void*, std::size_t, DType, ReduceOp) override {}
  void do_broadcast(void*, std::size_t, DType, int) override {}
  void do_barrier() override {}

 private:
  CopyBytes copy_;
};

}  // namespace nss::comm
