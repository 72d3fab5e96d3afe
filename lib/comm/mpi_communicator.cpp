#include "comm/mpi_communicator.h"

#include <mutex>

#include <climits>

#include "comm/mpi_check.h"
#include "comm/mpi_runtime.h"
#include "core/error.h"
#include "core/half.h"

namespace nss::comm {
namespace {

struct Bf16 {
  static float load(std::uint16_t v) { return bf16_to_float(v); }
  static std::uint16_t store(float v) { return float_to_bf16(v); }
};
struct F16 {
  static float load(std::uint16_t v) { return f16_to_float(v); }
  static std::uint16_t store(float v) { return float_to_f16(v); }
};
struct Sum {
  static float apply(float a, float b) { return a + b; }
};
struct Max {
  static float apply(float a, float b) { return a > b ? a : b; }
};
struct Min {
  static float apply(float a, float b) { return a < b ? a : b; }
};

// MPI user operation on 16-bit floats: accumulate in fp32, round once.
template <class Format, class Op>
void reduce_half(void* in, void* inout, int* len, MPI_Datatype*) {
  const auto* a = static_cast<const std::uint16_t*>(in);
  auto* b = static_cast<std::uint16_t*>(inout);
  for (int i = 0; i < *len; ++i)
    b[i] = Format::store(Op::apply(Format::load(a[i]), Format::load(b[i])));
}

struct HalfOps {
  MPI_Op ops[2][3];  // [bf16, f16][sum, max, min]
};

const HalfOps& half_ops() {
  static HalfOps table;
  static std::once_flag once;
  std::call_once(once, [] {
    NSS_MPI_CHECK(MPI_Op_create(&reduce_half<Bf16, Sum>, 1, &table.ops[0][0]));
    NSS_MPI_CHECK(MPI_Op_create(&reduce_half<Bf16, Max>, 1, &table.ops[0][1]));
    NSS_MPI_CHECK(MPI_Op_create(&reduce_half<Bf16, Min>, 1, &table.ops[0][2]));
    NSS_MPI_CHECK(MPI_Op_create(&reduce_half<F16, Sum>, 1, &table.ops[1][0]));
    NSS_MPI_CHECK(MPI_Op_create(&reduce_half<F16, Max>, 1, &table.ops[1][1]));
    NSS_MPI_CHECK(MPI_Op_create(&reduce_half<F16, Min>, 1, &table.ops[1][2]));
  });
  return table;
}

MPI_Op mpi_op(ReduceOp op, DType dtype) {
  const int index = op == ReduceOp::kSum ? 0 : op == ReduceOp::kMax ? 1 : 2;
  if (dtype == DType::kBFloat16) return half_ops().ops[0][index];
  if (dtype == DType::kFloat16) return half_ops().ops[1][index];
  static const MPI_Op kBuiltin[] = {MPI_SUM, MPI_MAX, MPI_MIN};
  return kBuiltin[index];
}

int checked_count(std::size_t count, const char* op) {
  if (count > static_cast<std::size_t>(INT_MAX))
    throw InternalError("comm",
                        std::string(op) + " of " + std::to_string(count) +
                            " elements exceeds MPI's int count limit",
                        "use more ranks so that each shard holds fewer than 2^31 elements");
  return static_cast<int>(count);
}

MPI_Comm duplicate(MPI_Comm parent) {
  MPI_Comm comm;
  NSS_MPI_CHECK(MPI_Comm_dup(parent, &comm));
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  return comm;
}

}  // namespace

std::unique_ptr<MpiCommunicator> MpiCommunicator::create(MPI_Comm parent) {
  const MPI_Comm comm = duplicate(parent);
  const RankPosition p = rank_position(comm);
  return std::unique_ptr<MpiCommunicator>(
      new MpiCommunicator(comm, p.rank, p.size, p.local_rank, p.local_size));
}

MpiCommunicator::MpiCommunicator(MPI_Comm comm, int rank, int size, int local_rank, int local_size)
    : Communicator(rank, size, local_rank, local_size), comm_(comm) {}

MpiCommunicator::~MpiCommunicator() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Comm_free(&comm_);
}

void MpiCommunicator::do_all_gather(const void* shard, void* full, std::size_t count, DType dtype) {
  const int n = checked_count(count, "all_gather");
  NSS_MPI_CHECK(
      MPI_Allgather(shard, n, mpi_datatype_of(dtype), full, n, mpi_datatype_of(dtype), comm_));
}

void MpiCommunicator::do_reduce_scatter(const void* full, void* shard, std::size_t count,
                                        DType dtype) {
  const int n = checked_count(count, "reduce_scatter");
  NSS_MPI_CHECK(MPI_Reduce_scatter_block(full, shard, n, mpi_datatype_of(dtype),
                                         mpi_op(ReduceOp::kSum, dtype), comm_));
}

void MpiCommunicator::do_all_reduce(void* buffer, std::size_t count, DType dtype, ReduceOp op) {
  // Large buffers go in int-sized pieces; all_reduce is element-wise so this is exact.
  auto* bytes = static_cast<char*>(buffer);
  const std::size_t piece = static_cast<std::size_t>(INT_MAX) / 2;
  for (std::size_t done = 0; done < count; done += piece) {
    const int n = static_cast<int>(std::min(piece, count - done));
    NSS_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, bytes + done * dtype_size(dtype), n,
                                mpi_datatype_of(dtype), mpi_op(op, dtype), comm_));
  }
}

void MpiCommunicator::do_broadcast(void* buffer, std::size_t count, DType dtype, int root) {
  auto* bytes = static_cast<char*>(buffer);
  const std::size_t piece = static_cast<std::size_t>(INT_MAX) / 2;
  for (std::size_t done = 0; done < count; done += piece) {
    const int n = static_cast<int>(std::min(piece, count - done));
    NSS_MPI_CHECK(
        MPI_Bcast(bytes + done * dtype_size(dtype), n, mpi_datatype_of(dtype), root, comm_));
  }
}

void MpiCommunicator::do_barrier() {
  NSS_MPI_CHECK(MPI_Barrier(comm_));
}

}  // namespace nss::comm
