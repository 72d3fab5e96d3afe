#include "comm/communicator.h"

#include <chrono>

#include "core/error.h"

namespace nss::comm {
namespace {

void require_buffer(const void* pointer, std::size_t count, const char* what, const char* op) {
  if (count > 0 && pointer == nullptr)
    throw InternalError("comm", std::string(op) + ": " + what + " is null for " +
                                    std::to_string(count) + " elements");
}

}  // namespace

double CommStats::total_bytes() const {
  double total = 0;
  for (const auto& totals : by_kind) total += totals.bytes;
  return total;
}

double CommStats::total_seconds() const {
  double total = 0;
  for (const auto& totals : by_kind) total += totals.seconds;
  return total;
}

CommStats CommStats::since(const CommStats& earlier) const {
  CommStats diff;
  for (int k = 0; k < kCollectiveKinds; ++k) {
    diff.by_kind[k].calls = by_kind[k].calls - earlier.by_kind[k].calls;
    diff.by_kind[k].bytes = by_kind[k].bytes - earlier.by_kind[k].bytes;
    diff.by_kind[k].seconds = by_kind[k].seconds - earlier.by_kind[k].seconds;
  }
  return diff;
}

Communicator::Communicator(int rank, int size, int local_rank, int local_size)
    : rank_(rank), size_(size), local_rank_(local_rank), local_size_(local_size) {
  if (size < 1 || rank < 0 || rank >= size)
    throw InternalError("comm",
                        "invalid rank " + std::to_string(rank) + " of " + std::to_string(size));
}

// Seconds are the host's: for collectives a backend returns from before they
// finish (NCCL all-gather and reduce-scatter), the time to enqueue them.
template <class Fn>
void Communicator::run(CollectiveKind kind, double full_bytes, double bus_bytes, bool finishes,
                       Fn&& fn) {
  issuing_seq_ = tracker_.begin(kind, full_bytes);
  const auto start = std::chrono::steady_clock::now();
  fn();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (finishes) tracker_.finish_through(issuing_seq_);
  auto& totals = stats_.by_kind[static_cast<int>(kind)];
  totals.calls += 1;
  totals.bytes += bus_bytes;
  totals.seconds += seconds;
}

void Communicator::all_gather(const void* shard, void* full, std::size_t count, DType dtype) {
  wait(start_all_gather(shard, full, count, dtype));
}

CollectiveTicket Communicator::start_all_gather(const void* shard, void* full, std::size_t count,
                                                DType dtype) {
  require_buffer(shard, count, "shard", "all_gather");
  require_buffer(full, count, "full buffer", "all_gather");
  const double full_bytes = static_cast<double>(count) * dtype_size(dtype) * size_;
  run(CollectiveKind::kAllGather, full_bytes, full_bytes * (size_ - 1) / size_,
      finishes_on_return(CollectiveKind::kAllGather),
      [&] { do_all_gather(shard, full, count, dtype); });
  return issuing_seq_;
}

void Communicator::wait(CollectiveTicket ticket) {
  do_wait(ticket);
}

void Communicator::reduce_scatter(const void* full, void* shard, std::size_t count, DType dtype) {
  require_buffer(full, count, "full buffer", "reduce_scatter");
  require_buffer(shard, count, "shard", "reduce_scatter");
  const double full_bytes = static_cast<double>(count) * dtype_size(dtype) * size_;
  run(CollectiveKind::kReduceScatter, full_bytes, full_bytes * (size_ - 1) / size_,
      finishes_on_return(CollectiveKind::kReduceScatter),
      [&] { do_reduce_scatter(full, shard, count, dtype); });
}

void Communicator::all_reduce(void* buffer, std::size_t count, DType dtype, ReduceOp op) {
  require_buffer(buffer, count, "buffer", "all_reduce");
  const double bytes = static_cast<double>(count) * dtype_size(dtype);
  run(CollectiveKind::kAllReduce, bytes, 2.0 * bytes * (size_ - 1) / size_,
      finishes_on_return(CollectiveKind::kAllReduce),
      [&] { do_all_reduce(buffer, count, dtype, op); });
}

void Communicator::all_reduce_for_compute(void* buffer, std::size_t count, DType dtype) {
  require_buffer(buffer, count, "buffer", "all_reduce");
  const double bytes = static_cast<double>(count) * dtype_size(dtype);
  run(CollectiveKind::kAllReduce, bytes, 2.0 * bytes * (size_ - 1) / size_,
      !all_reduce_for_compute_returns_early(),
      [&] { do_all_reduce_for_compute(buffer, count, dtype); });
}

void Communicator::broadcast(void* buffer, std::size_t count, DType dtype, int root) {
  require_buffer(buffer, count, "buffer", "broadcast");
  if (root < 0 || root >= size_)
    throw InternalError("comm", "broadcast root " + std::to_string(root) + " out of range");
  const double bytes = static_cast<double>(count) * dtype_size(dtype);
  run(CollectiveKind::kBroadcast, bytes, size_ > 1 ? bytes : 0.0,
      finishes_on_return(CollectiveKind::kBroadcast),
      [&] { do_broadcast(buffer, count, dtype, root); });
}

void Communicator::barrier() {
  run(CollectiveKind::kBarrier, 0, 0, finishes_on_return(CollectiveKind::kBarrier),
      [&] { do_barrier(); });
}

}  // namespace nss::comm
