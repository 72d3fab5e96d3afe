// The NF4 shard of a unit's quantised base at 1, 2, 3 and 4 ranks: every rank
// quantises only its own slices, gathers the bytes and dequantises, and the
// full tensors are bit for bit dequant(quant(W)) of the whole tensor
// (quant::nf4_round_trip), so every world size gives the same base; with and
// without double quantisation, in fp32 and bf16, through the host loops and
// the device path's torch operations; the bytes held and gathered are the
// documented sizes; and a unit's gather (also a prefetched one) hands its
// compute exactly those values.
#include "fsdp/quantized_shard.h"

#include <cmath>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "comm/mpi_communicator.h"
#include "fsdp/sharded_unit.h"
#include "quant/nf4_storage.h"
#include "support/cuda_ranks.h"

namespace nss::fsdp {
namespace {

// Lengths that end mid-block, mid-group and exactly on a group, an odd one,
// and an unquantised frozen parameter between them.
std::vector<layout::FlatParam> params() {
  return {{"q", {130, 257}, false, false, true},  {"norm", {9}, false, false, false},
          {"k", {64, 256}, false, false, true},   {"v", {3, 11}, false, false, true},
          {"adapter", {4, 5}, true, true, false}, {"down", {301, 129}, false, false, true}};
}

// Weights with a spread of magnitudes per block, some blocks all zero.
float weight(const std::string& name, std::int64_t i) {
  if (name == "k" && i / 64 == 3) return 0.0f;
  const double h = static_cast<double>(std::hash<std::string>{}(name) % 89);
  return static_cast<float>(std::sin(0.61 * static_cast<double>(i) + h) *
                            std::exp(std::cos(0.013 * static_cast<double>(i))));
}

torch::Tensor expected_round_trip(const layout::FlatParam& p, bool double_quant) {
  std::vector<float> in(static_cast<std::size_t>(p.numel())), out(in.size());
  for (std::int64_t i = 0; i < p.numel(); ++i) in[static_cast<std::size_t>(i)] = weight(p.name, i);
  quant::nf4_round_trip(in.data(), p.numel(), double_quant, out.data());
  return torch::from_blob(out.data(), {p.numel()}, torch::kFloat32).clone();
}

std::vector<float> host_shard(const layout::FlatLayout& layout, int rank) {
  std::vector<float> host(static_cast<std::size_t>(layout.quantized_shard_size()), 0.0f);
  for (const auto& piece : layout.quantized_pieces(rank))
    for (std::int64_t i = 0; i < piece.length; ++i)
      host[static_cast<std::size_t>(piece.shard_offset + i)] =
          weight(layout.params()[piece.param].name, piece.tensor_offset + i);
  return host;
}

class QuantizedShardTest : public ::testing::Test {
 protected:
  std::unique_ptr<comm::Communicator> comm_ = comm::MpiCommunicator::create(MPI_COMM_WORLD);
};

TEST_F(QuantizedShardTest, EveryWorldSizeGathersTheWholeTensorsRoundTrip) {
  const layout::FlatLayout layout(params(), comm_->size());
  for (const bool double_quant : {false, true}) {
    QuantizedShard shard(layout, comm_->rank(), double_quant, torch::kCPU, torch::kFloat32);
    const auto host = host_shard(layout, comm_->rank());
    shard.quantize(host.data());
    shard.quantize_scales(*comm_, "test");
    const InFlightGather gathered = shard.start_gather(*comm_);
    for (const auto ticket : gathered.tickets) comm_->wait(ticket);
    for (const auto dtype : {torch::kFloat32, torch::kBFloat16}) {
      const torch::Tensor host_path = shard.dequantize(gathered.full, dtype);
      const torch::Tensor torch_path =
          shard.dequantize(gathered.full, dtype, QuantizedShard::Dequantizer::kTorch);
      ASSERT_EQ(host_path.numel(), layout.quantized_padded());
      for (std::size_t i = 0; i < layout.params().size(); ++i) {
        const layout::FlatParam& p = layout.params()[i];
        if (!p.quantized) continue;
        const torch::Tensor expected = expected_round_trip(p, double_quant).to(dtype);
        const auto at = layout.slot(i).offset;
        EXPECT_TRUE(torch::equal(host_path.narrow(0, at, p.numel()), expected))
            << p.name << " double_quant " << double_quant << " " << c10::toString(dtype);
        EXPECT_TRUE(torch::equal(torch_path.narrow(0, at, p.numel()), expected))
            << p.name << " (torch operations) double_quant " << double_quant << " "
            << c10::toString(dtype);
      }
    }
  }
}

// On a GPU the gathered bytes are dequantised by the NF4 CUDA kernels: the
// same bits as the torch operations and the host round trip. The scales of
// double quantisation are gathered in device memory, so over NCCL, as the
// trainer does on GPUs (MPI would read device pointers as host memory).
TEST_F(QuantizedShardTest, CudaKernelsGiveTheHostRoundTrip) {
  if (comm_->size() != 1) GTEST_SKIP() << "checked at one rank, whose shard is the whole buffer";
  NSS_CUDA_RANKS_OR_SKIP(cuda);
  const layout::FlatLayout layout(params(), cuda.nccl->size());
  const torch::Device device = cuda.device;
  for (const bool double_quant : {false, true}) {
    QuantizedShard shard(layout, cuda.nccl->rank(), double_quant, device, torch::kBFloat16);
    const auto host = host_shard(layout, cuda.nccl->rank());
    shard.quantize(host.data());
    shard.quantize_scales(*cuda.nccl, "test");
    std::vector<torch::Tensor> gathered;
    for (const torch::Tensor& part : shard.all_gather_inputs()) gathered.push_back(part.to(device));
    for (const auto dtype : {torch::kFloat32, torch::kBFloat16}) {
      const torch::Tensor kernels = shard.dequantize(gathered, dtype).cpu();
      const torch::Tensor torch_path =
          shard.dequantize(gathered, dtype, QuantizedShard::Dequantizer::kTorch).cpu();
      for (std::size_t i = 0; i < layout.params().size(); ++i) {
        const layout::FlatParam& p = layout.params()[i];
        if (!p.quantized) continue;
        const torch::Tensor expected = expected_round_trip(p, double_quant).to(dtype);
        const auto at = layout.slot(i).offset;
        EXPECT_TRUE(torch::equal(kernels.narrow(0, at, p.numel()), expected))
            << p.name << " double_quant " << double_quant << " " << c10::toString(dtype);
        EXPECT_TRUE(torch::equal(torch_path.narrow(0, at, p.numel()), expected)) << p.name;
      }
    }
  }
}

TEST_F(QuantizedShardTest, HoldsAndGathersTheDocumentedBytes) {
  const layout::FlatLayout layout(params(), comm_->size());
  const std::int64_t shard = layout.quantized_shard_size();
  ASSERT_EQ(shard % layout::FlatLayout::kQuantizedGroup, 0);
  for (const bool double_quant : {false, true}) {
    QuantizedShard quantized(layout, comm_->rank(), double_quant, torch::kCPU, torch::kFloat32);
    const auto sizes = quant::nf4_storage(shard, double_quant);
    EXPECT_EQ(quantized.bytes(), sizes.total());
    // 4.5 bits per element, or 4 + 8/64 + 32/16384 with double quantisation.
    const double bits = 8.0 * static_cast<double>(sizes.total()) / static_cast<double>(shard);
    EXPECT_DOUBLE_EQ(bits, double_quant ? 4.0 + 0.125 + 32.0 / 16384 : 4.5);
    comm_->reset_stats();
    const InFlightGather gathered = quantized.start_gather(*comm_);
    for (const auto ticket : gathered.tickets) comm_->wait(ticket);
    const double n = comm_->size();
    EXPECT_DOUBLE_EQ(comm_->stats()[comm::CollectiveKind::kAllGather].bytes,
                     (n - 1) * static_cast<double>(sizes.total()));
  }
}

TEST_F(QuantizedShardTest, AUnitComputesOnTheRoundTrip) {
  for (const bool prefetch : {false, true}) {
    ShardOptions options;
    options.double_quant = true;
    options.prefetch = prefetch;
    ShardedUnit unit("unit", layout::FlatLayout(params(), comm_->size()), *comm_, options);
    unit.materialize(
        [](const layout::FlatParam& p, std::int64_t offset, std::int64_t count, float* out) {
          for (std::int64_t i = 0; i < count; ++i) out[i] = weight(p.name, offset + i);
        });
    ASSERT_NE(unit.quantized(), nullptr);
    if (prefetch) unit.prefetch("forward");
    const auto views = unit.views(unit.gather(FlatBuffer::kTrainable, "forward"),
                                  unit.gather(FlatBuffer::kFrozen, "forward"),
                                  unit.gather(FlatBuffer::kQuantized, "forward"));
    for (std::size_t i = 0; i < views.size(); ++i) {
      const layout::FlatParam& p = unit.layout().params()[i];
      torch::Tensor expected;
      if (p.quantized) {
        expected = expected_round_trip(p, true);
      } else {
        expected = torch::empty({p.numel()});
        for (std::int64_t e = 0; e < p.numel(); ++e) expected[e] = weight(p.name, e);
      }
      EXPECT_TRUE(torch::equal(views[i].reshape(-1), expected)) << p.name;
    }
  }
}

}  // namespace
}  // namespace nss::fsdp
