#include "comm/nccl_communicator.h"

#include <thread>

#include "comm/cuda_check.h"
#include "comm/mpi_check.h"
#include "comm/mpi_runtime.h"

namespace nss::comm {
namespace {

ncclDataType_t nccl_type(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return ncclFloat32;
    case DType::kFloat64: return ncclFloat64;
    case DType::kBFloat16: return ncclBfloat16;
    case DType::kFloat16: return ncclFloat16;
    case DType::kInt8: return ncclInt8;
    case DType::kUInt8: return ncclUint8;
    case DType::kInt32: return ncclInt32;
    case DType::kUInt32: return ncclUint32;
    case DType::kInt64: return ncclInt64;
    case DType::kUInt64: return ncclUint64;
    case DType::kInt16:
    case DType::kUInt16: break;
  }
  throw InternalError("comm", std::string("NCCL has no ") + dtype_name(dtype) + " type");
}

ncclRedOp_t nccl_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum: return ncclSum;
    case ReduceOp::kMax: return ncclMax;
    case ReduceOp::kMin: return ncclMin;
  }
  return ncclSum;
}

class NcclCommunicator final : public Communicator {
 public:
  NcclCommunicator(int rank, int size, int local_rank, int local_size, int device,
                   const ncclUniqueId& id, cudaStream_t stream)
      : Communicator(rank, size, local_rank, local_size), device_(device) {
    NSS_CUDA_CHECK(cudaSetDevice(device_));
    if (stream == nullptr) {
      NSS_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
      owns_stream_ = true;
    } else {
      stream_ = stream;
    }
    NSS_NCCL_CHECK(ncclCommInitRank(&comm_, size, id, rank));
  }

  ~NcclCommunicator() override {
    if (comm_) ncclCommDestroy(comm_);
    if (owns_stream_) cudaStreamDestroy(stream_);
  }

  const char* backend() const override { return "nccl"; }

 protected:
  void do_all_gather(const void* shard, void* full, std::size_t count, DType dtype) override {
    NSS_NCCL_CHECK(ncclAllGather(shard, full, count, nccl_type(dtype), comm_, stream_));
    wait();
  }
  void do_reduce_scatter(const void* full, void* shard, std::size_t count, DType dtype) override {
    NSS_NCCL_CHECK(ncclReduceScatter(full, shard, count, nccl_type(dtype), ncclSum, comm_, stream_));
    wait();
  }
  void do_all_reduce(void* buffer, std::size_t count, DType dtype, ReduceOp op) override {
    NSS_NCCL_CHECK(ncclAllReduce(buffer, buffer, count, nccl_type(dtype), nccl_op(op), comm_, stream_));
    wait();
  }
  void do_broadcast(void* buffer, std::size_t count, DType dtype, int root) override {
    NSS_NCCL_CHECK(ncclBroadcast(buffer, buffer, count, nccl_type(dtype), root, comm_, stream_));
    wait();
  }
  void do_barrier() override {
    // NCCL has no barrier: an all-reduce of one element orders every rank.
    if (!barrier_buffer_) NSS_CUDA_CHECK(cudaMalloc(&barrier_buffer_, sizeof(float)));
    NSS_NCCL_CHECK(ncclAllReduce(barrier_buffer_, barrier_buffer_, 1, ncclFloat32, ncclSum, comm_,
                                 stream_));
    wait();
  }

 private:
  // Polls instead of cudaStreamSynchronize so that NCCL's asynchronous errors
  // (a peer that died, a broken link) surface here instead of hanging forever.
  void wait() {
    for (;;) {
      const cudaError_t state = cudaStreamQuery(stream_);
      if (state == cudaSuccess) return;
      if (state != cudaErrorNotReady) NSS_CUDA_CHECK(state);
      ncclResult_t async_error = ncclSuccess;
      NSS_NCCL_CHECK(ncclCommGetAsyncError(comm_, &async_error));
      if (async_error != ncclSuccess) {
        ncclCommAbort(comm_);
        comm_ = nullptr;
        NSS_NCCL_CHECK(async_error);
      }
      std::this_thread::yield();
    }
  }

  int device_;
  cudaStream_t stream_ = nullptr;
  bool owns_stream_ = false;
  ncclComm_t comm_ = nullptr;
  void* barrier_buffer_ = nullptr;
};

}  // namespace

bool nccl_available() { return true; }

std::unique_ptr<Communicator> make_nccl_communicator(MPI_Comm world, int device, void* stream) {
  const RankPosition p = rank_position(world);
  ncclUniqueId id;
  if (p.rank == 0) NSS_NCCL_CHECK(ncclGetUniqueId(&id));
  NSS_MPI_CHECK(MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, world));
  return std::make_unique<NcclCommunicator>(p.rank, p.size, p.local_rank, p.local_size, device,
                                            id, static_cast<cudaStream_t>(stream));
}

}  // namespace nss::comm
