#include "comm/nccl_communicator.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "comm/cuda_check.h"
#include "comm/mpi_check.h"
#include "comm/mpi_runtime.h"

namespace nss::comm {
namespace {

ncclDataType_t nccl_type(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return ncclFloat32;
    case DType::kFloat64:
      return ncclFloat64;
    case DType::kBFloat16:
      return ncclBfloat16;
    case DType::kFloat16:
      return ncclFloat16;
    case DType::kInt8:
      return ncclInt8;
    case DType::kUInt8:
      return ncclUint8;
    case DType::kInt32:
      return ncclInt32;
    case DType::kUInt32:
      return ncclUint32;
    case DType::kInt64:
      return ncclInt64;
    case DType::kUInt64:
      return ncclUint64;
    case DType::kInt16:
    case DType::kUInt16:
      break;
  }
  throw InternalError("comm", std::string("NCCL has no ") + dtype_name(dtype) + " type");
}

ncclRedOp_t nccl_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
      return ncclSum;
    case ReduceOp::kMax:
      return ncclMax;
    case ReduceOp::kMin:
      return ncclMin;
  }
  return ncclSum;
}

// Before any CUDA call that would fail with a cryptic runtime error (no
// driver, CUDA_VISIBLE_DEVICES empty, an ordinal past the visible devices).
// Collective, so that no rank waits in the unique-id broadcast for one that threw.
void require_visible_devices(MPI_Comm world, int device) {
  int visible = 0;
  const cudaError_t counted = cudaGetDeviceCount(&visible);
  if (counted != cudaSuccess) cudaGetLastError();  // clear the sticky error for later CUDA users
  int ok = counted == cudaSuccess && device >= 0 && device < visible ? 1 : 0;
  NSS_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, world));
  const char* hint =
      "run on GPU nodes with one rank per device (check nvidia-smi, CUDA_VISIBLE_DEVICES and "
      "the job's GPU request, e.g. Slurm --gpus-per-task), or set parallel.backend: mpi";
  if (counted != cudaSuccess)
    throw UsageError("comm",
                     std::string("parallel.backend nccl needs a CUDA device, but the CUDA "
                                 "runtime reports: ") +
                         cudaGetErrorString(counted),
                     hint);
  if (device < 0 || device >= visible)
    throw UsageError("comm",
                     "CUDA device " + std::to_string(device) +
                         " is not visible: this process sees " + std::to_string(visible) +
                         " CUDA device(s)",
                     hint);
  if (!ok) throw UsageError("comm", "another rank has no usable CUDA device for NCCL", hint);
}

class NcclCommunicator final : public Communicator {
 public:
  NcclCommunicator(const RankPosition& p, int device, const ncclUniqueId& id,
                   cudaStream_t compute_stream)
      : Communicator(p.rank, p.size, p.local_rank, p.local_size),
        device_(device),
        compute_stream_(compute_stream) {
    NSS_CUDA_CHECK(cudaSetDevice(device_));
    // Non-blocking: the comm stream must not serialise with the legacy default
    // stream (torch's default), so that ordering is exactly the two events.
    NSS_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    NSS_CUDA_CHECK(cudaEventCreateWithFlags(&inputs_ready_, cudaEventDisableTiming));
    NSS_NCCL_CHECK(ncclCommInitRank(&comm_, p.size, id, p.rank));
  }

  ~NcclCommunicator() override {
    if (comm_ && !aborted_) ncclCommDestroy(comm_);
    if (barrier_buffer_) cudaFree(barrier_buffer_);
    for (const Pending& p : pending_) cudaEventDestroy(p.done);
    for (cudaEvent_t event : spare_events_) cudaEventDestroy(event);
    cudaEventDestroy(inputs_ready_);
    cudaStreamDestroy(stream_);
  }

  const char* backend() const override { return "nccl"; }

  // From the watchdog thread. The lock keeps ncclCommAbort from freeing the
  // communicator while this rank's own thread is inside an NCCL call; a thread
  // stuck inside one for longer than kAbortLockWait is left alone (the
  // process is about to end anyway).
  void abort() override {
    std::unique_lock<std::timed_mutex> lock(nccl_mutex_, kAbortLockWait);
    if (lock.owns_lock() && !aborted_.exchange(true)) ncclCommAbort(comm_);
  }

 protected:
  // The shard collectives return once enqueued: the host goes on issuing
  // compute (and the next unit's all-gather, the prefetch) while they run.
  // The compute stream waits for an all-gather when its ticket is waited on,
  // for a reduce-scatter at once (autograd reads the gradient next).
  void do_all_gather(const void* shard, void* full, std::size_t count, DType dtype) override {
    enqueue("ncclAllGather",
            [&] { return ncclAllGather(shard, full, count, nccl_type(dtype), comm_, stream_); });
  }
  void do_reduce_scatter(const void* full, void* shard, std::size_t count, DType dtype) override {
    enqueue("ncclReduceScatter", [&] {
      return ncclReduceScatter(full, shard, count, nccl_type(dtype), ncclSum, comm_, stream_);
    });
    do_wait(issuing_seq());
  }
  // Hybrid sharding's gradient shards: like the reduce-scatter before it,
  // only the compute stream waits for it.
  void do_all_reduce_for_compute(void* buffer, std::size_t count, DType dtype) override {
    enqueue("ncclAllReduce", [&] {
      return ncclAllReduce(buffer, buffer, count, nccl_type(dtype), ncclSum, comm_, stream_);
    });
    do_wait(issuing_seq());
  }
  bool all_reduce_for_compute_returns_early() const override { return true; }
  void do_finish_all() override {
    poll_until([&] {
      retire_finished();
      return pending_.empty();
    });
  }
  bool finishes_on_return(CollectiveKind kind) const override {
    return kind != CollectiveKind::kAllGather && kind != CollectiveKind::kReduceScatter;
  }
  void do_wait(CollectiveTicket ticket) override {
    std::lock_guard<std::timed_mutex> lock(nccl_mutex_);
    if (aborted_) throw_aborted();
    for (const Pending& p : pending_) {
      if (p.seq == ticket) {
        NSS_CUDA_CHECK(cudaStreamWaitEvent(compute_stream_, p.done, 0));
        return;
      }
    }
    // Not pending any more: seen finished, nothing to order after.
  }
  void do_all_reduce(void* buffer, std::size_t count, DType dtype, ReduceOp op) override {
    run("ncclAllReduce", [&] {
      return ncclAllReduce(buffer, buffer, count, nccl_type(dtype), nccl_op(op), comm_, stream_);
    });
  }
  void do_broadcast(void* buffer, std::size_t count, DType dtype, int root) override {
    run("ncclBroadcast", [&] {
      return ncclBroadcast(buffer, buffer, count, nccl_type(dtype), root, comm_, stream_);
    });
  }
  void do_barrier() override {
    // NCCL has no barrier: an all-reduce of one element orders every rank.
    if (!barrier_buffer_) NSS_CUDA_CHECK(cudaMalloc(&barrier_buffer_, sizeof(float)));
    run("ncclAllReduce (barrier)", [&] {
      return ncclAllReduce(barrier_buffer_, barrier_buffer_, 1, ncclFloat32, ncclSum, comm_,
                           stream_);
    });
  }

 private:
  // A collective enqueued on stream_ that the host has not yet seen finish.
  struct Pending {
    CollectiveTicket seq;
    cudaEvent_t done;
  };

  // Enqueues one collective on stream_ after the inputs the compute stream
  // wrote so far, and records its completion in pending_ without waiting.
  template <class Enqueue>
  void enqueue(const char* name, Enqueue&& enqueue_collective) {
    std::lock_guard<std::timed_mutex> lock(nccl_mutex_);
    if (aborted_) throw_aborted();
    retire_finished();
    NSS_CUDA_CHECK(cudaEventRecord(inputs_ready_, compute_stream_));
    NSS_CUDA_CHECK(cudaStreamWaitEvent(stream_, inputs_ready_, 0));
    const ncclResult_t rc = enqueue_collective();
    if (rc != ncclSuccess)
      throw InternalError("comm", std::string(name) + " failed: " + ncclGetErrorString(rc),
                          "set NCCL_DEBUG=INFO for NCCL's own diagnostics");
    cudaEvent_t done = nullptr;
    if (spare_events_.empty()) {
      NSS_CUDA_CHECK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
    } else {
      done = spare_events_.back();
      spare_events_.pop_back();
    }
    NSS_CUDA_CHECK(cudaEventRecord(done, stream_));
    pending_.push_back({issuing_seq(), done});
  }

  // Tells the tracker about enqueued collectives that have finished (the
  // stream runs them in order); their events are reused. Under nccl_mutex_.
  void retire_finished() {
    while (!pending_.empty()) {
      const cudaError_t state = cudaEventQuery(pending_.front().done);
      if (state == cudaErrorNotReady) return;
      if (state != cudaSuccess) NSS_CUDA_CHECK(state);
      tracker().finish_through(pending_.front().seq);
      spare_events_.push_back(pending_.front().done);
      pending_.pop_front();
    }
  }

  // A collective whose result the host reads next: enqueued like the shard
  // collectives, then waited for on the host, and with it everything
  // enqueued before it.
  template <class Enqueue>
  void run(const char* name, Enqueue&& enqueue_collective) {
    enqueue(name, enqueue_collective);
    do_wait(issuing_seq());
    do_finish_all();
  }

  // Polls `finished` (called under nccl_mutex_) instead of blocking in
  // cudaEventSynchronize, so that NCCL's asynchronous errors (a peer that
  // died, a broken link) surface here, and a hang stays visible to the
  // watchdog, which aborts the communicator (abort()) after
  // parallel.collective_timeout_s.
  template <class Finished>
  void poll_until(Finished&& finished) {
    for (auto pause = std::chrono::microseconds(1);; pause = std::min(2 * pause, kMaxPause)) {
      {
        std::lock_guard<std::timed_mutex> lock(nccl_mutex_);
        if (aborted_) throw_aborted();
        if (finished()) return;
        ncclResult_t async_error = ncclSuccess;
        NSS_NCCL_CHECK(ncclCommGetAsyncError(comm_, &async_error));
        if (async_error != ncclSuccess) {
          aborted_ = true;
          ncclCommAbort(comm_);
          throw InternalError("comm",
                              std::string("NCCL reported an asynchronous error: ") +
                                  ncclGetErrorString(async_error) + " (communicator aborted)",
                              "a peer rank died or the network failed; see the other ranks' "
                              "logs, and set NCCL_DEBUG=INFO for NCCL's own diagnostics");
        }
      }
      std::this_thread::sleep_for(pause);
    }
  }

  [[noreturn]] static void throw_aborted() {
    throw Error(ExitCode::kCollectiveTimeout, "comm",
                "the NCCL communicator was aborted by the collective-timeout watchdog",
                "see the watchdog's diagnosis above (the rank that is behind)");
  }

  // Short collectives finish within the first polls; long ones cost at most
  // this much latency and no busy core.
  static constexpr std::chrono::microseconds kMaxPause{100};
  static constexpr std::chrono::seconds kAbortLockWait{2};

  int device_;
  cudaStream_t compute_stream_;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t inputs_ready_ = nullptr;
  ncclComm_t comm_ = nullptr;
  std::timed_mutex nccl_mutex_;  // comm_ between this rank's thread and abort()
  std::atomic<bool> aborted_{false};
  void* barrier_buffer_ = nullptr;
  std::deque<Pending> pending_;  // oldest first
  std::vector<cudaEvent_t> spare_events_;
};

}  // namespace

bool nccl_available() {
  return true;
}

std::unique_ptr<Communicator> make_nccl_communicator(MPI_Comm world, int device,
                                                     void* compute_stream) {
  require_visible_devices(world, device);
  const RankPosition p = rank_position(world);
  ncclUniqueId id;
  if (p.rank == 0) NSS_NCCL_CHECK(ncclGetUniqueId(&id));
  NSS_MPI_CHECK(MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, world));
  return std::make_unique<NcclCommunicator>(p, device, id,
                                            static_cast<cudaStream_t>(compute_stream));
}

}  // namespace nss::comm
