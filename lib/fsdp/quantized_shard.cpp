#include "fsdp/quantized_shard.h"

#include <array>

#include <ATen/Parallel.h>
#include <torch/torch.h>

#include "core/error.h"
#include "quant/double_quant.h"
#include "quant/nf4.h"
#include "quant/nf4_cuda.h"
#include "quant/nf4_storage.h"

#if NSS_HAVE_CUDA
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif

namespace nss::fsdp {
namespace {

using quant::kAbsmaxGroupSize;
using quant::kNf4BlockSize;
constexpr std::int64_t kGroupElements = kNf4BlockSize * kAbsmaxGroupSize;

std::int64_t blocks_of(std::int64_t elements) {
  return (elements + kNf4BlockSize - 1) / kNf4BlockSize;
}

// Blocks per task of the host loops: large enough to amortise a task.
constexpr std::int64_t kBlocksPerTask = 1024;

// Runs body(first_block, end_block) over [0, blocks) on the intra-op threads.
template <class Body>
void for_blocks(std::int64_t blocks, const Body& body) {
  at::parallel_for(0, blocks, kBlocksPerTask, body);
}

// Byte -> (level of the high nibble, level of the low nibble): the device path's table.
torch::Tensor pair_table() {
  std::array<float, 512> pairs;
  const auto& levels = quant::nf4_levels();
  for (int byte = 0; byte < 256; ++byte) {
    pairs[2 * byte] = levels[byte >> 4];
    pairs[2 * byte + 1] = levels[byte & 15];
  }
  return torch::from_blob(pairs.data(), {256, 2}, torch::kFloat32).clone();
}

torch::Tensor dynamic_map_tensor() {
  const auto& map = quant::dynamic_map();
  return torch::from_blob(const_cast<float*>(map.data()), {256}, torch::kFloat32).clone();
}

}  // namespace

QuantizedShard::QuantizedShard(const layout::FlatLayout& layout, int rank, bool double_quant,
                               torch::Device device, torch::Dtype compute_dtype)
    : pieces_(layout.quantized_pieces(rank)),
      shard_(layout.quantized_shard_size()),
      padded_(layout.quantized_padded()),
      double_quant_(double_quant),
      device_(device),
      compute_dtype_(compute_dtype) {
  for (std::size_t i = 0; i < layout.params().size(); ++i)
    if (layout.slot(i).quantized)
      tensors_.push_back({layout.slot(i).offset, layout.params()[i].numel()});
  NSS_ASSERT(shard_ % kGroupElements == 0, "fsdp", "a quantised shard is whole groups");
  const auto on_device = torch::TensorOptions().device(device_);
  codes_ = torch::zeros({shard_ / 2}, on_device.dtype(torch::kUInt8));
  block_scales_ = torch::zeros({shard_ / kNf4BlockSize},
                               on_device.dtype(double_quant_ ? torch::kUInt8 : torch::kFloat32));
  group_scales_ =
      torch::zeros({double_quant_ ? shard_ / kGroupElements : 0}, on_device.dtype(torch::kFloat32));
}

void QuantizedShard::fill(const layout::FlatLayout& layout, const ParamFiller& filler) {
  quantize(fill_on_host(layout, pieces_, shard_, filler).data_ptr<float>());
}

void QuantizedShard::complete_fill(comm::Communicator& comm, const std::string& label) {
  quantize_scales(comm, label);
}

void QuantizedShard::quantize(const float* host) {
  torch::Tensor codes = torch::zeros({shard_ / 2}, torch::kUInt8);
  torch::Tensor absmax = torch::zeros({shard_ / kNf4BlockSize}, torch::kFloat32);
  std::uint8_t* code_data = codes.data_ptr<std::uint8_t>();
  float* absmax_data = absmax.data_ptr<float>();
  for (const auto& piece : pieces_) {  // block-aligned: the bytes of the whole tensor
    for_blocks(blocks_of(piece.length), [&](std::int64_t first, std::int64_t end) {
      const std::int64_t begin = first * kNf4BlockSize;
      const std::int64_t count = std::min(end * kNf4BlockSize, piece.length) - begin;
      const std::int64_t at = piece.shard_offset + begin;
      quant::quantize_nf4(host + at, count, code_data + at / 2, absmax_data + at / kNf4BlockSize);
    });
  }
  codes_ = codes.to(device_);
  absmax_ = absmax;
}

void QuantizedShard::quantize_scales(comm::Communicator& comm, const std::string& label) {
  NSS_ASSERT(absmax_.defined(), "fsdp", "quantize_scales() before quantize()");
  const torch::Tensor absmax = std::move(absmax_);
  absmax_ = torch::Tensor();
  if (!double_quant_) {
    block_scales_ = absmax.to(device_);
    return;
  }
  const float* absmax_data = absmax.data_ptr<float>();
  // Each tensor's mean absmax, summed in block order over every rank's blocks.
  torch::Tensor all_absmax;
  {
    const std::int64_t count = absmax.numel();
    torch::Tensor send = absmax.to(device_);
    torch::Tensor full = torch::empty({count * comm.size()}, send.options());
    comm::CollectiveLabel collective(comm, label + " double quantisation");
    comm.all_gather(send.data_ptr(), full.data_ptr(), static_cast<std::size_t>(count),
                    DType::kFloat32);
    all_absmax = full.cpu();
  }
  for (auto& tensor : tensors_) {
    const std::int64_t blocks = blocks_of(tensor.numel);
    const float* first = all_absmax.data_ptr<float>() + tensor.offset / kNf4BlockSize;
    tensor.mean_absmax = quant::absmax_offset(quant::absmax_partial_sum(first, blocks), blocks);
  }
  torch::Tensor block_codes = torch::zeros({shard_ / kNf4BlockSize}, torch::kUInt8);
  torch::Tensor groups = torch::zeros({shard_ / kGroupElements}, torch::kFloat32);
  const std::int64_t shard_begin = shard_ * comm.rank();
  for (const auto& piece : pieces_) {  // group-aligned: the groups of the whole tensor
    const std::int64_t flat = shard_begin + piece.shard_offset;
    const Tensor* owner = nullptr;
    for (const auto& tensor : tensors_)
      if (flat >= tensor.offset && flat < tensor.offset + tensor.numel) owner = &tensor;
    NSS_ASSERT(owner != nullptr, "fsdp", "a quantised piece outside every tensor");
    const std::int64_t block = piece.shard_offset / kNf4BlockSize;
    quant::quantize_absmax(absmax_data + block, blocks_of(piece.length), owner->mean_absmax,
                           block_codes.data_ptr<std::uint8_t>() + block,
                           groups.data_ptr<float>() + piece.shard_offset / kGroupElements);
  }
  block_scales_ = block_codes.to(device_);
  group_scales_ = groups.to(device_);
}

std::vector<torch::Tensor> QuantizedShard::all_gather_inputs() const {
  return {codes_, block_scales_, group_scales_};
}

torch::Tensor QuantizedShard::post_all_gather(const std::vector<torch::Tensor>& gathered) const {
  return dequantize(gathered, compute_dtype_);
}

torch::Tensor QuantizedShard::dequantize(const std::vector<torch::Tensor>& gathered,
                                         torch::Dtype dtype, Dequantizer path) const {
  torch::NoGradGuard no_grad;
  if (path == Dequantizer::kAuto && device_.is_cpu()) return dequantize_on_host(gathered, dtype);
  if (path == Dequantizer::kAuto && device_.is_cuda() && NSS_HAVE_CUDA &&
      quant::nf4_cuda_compiled())
    return dequantize_with_kernels(gathered, dtype);
  return dequantize_with_torch(gathered, dtype);
}

torch::Tensor QuantizedShard::dequantize_on_host(const std::vector<torch::Tensor>& gathered,
                                                 torch::Dtype dtype) const {
  // fp32 and bf16 are written directly; another dtype converts from fp32.
  const bool direct = dtype == torch::kFloat32 || dtype == torch::kBFloat16;
  torch::Tensor out = torch::empty({padded_}, direct ? dtype : torch::kFloat32);
  const auto* codes = gathered[0].data_ptr<std::uint8_t>();
  for (const auto& tensor : tensors_) {
    const std::int64_t blocks = blocks_of(tensor.numel);
    const std::int64_t first_block = tensor.offset / kNf4BlockSize;
    std::vector<float> absmax;
    const float* scales = nullptr;
    if (double_quant_) {
      absmax.resize(static_cast<std::size_t>(blocks));
      quant::dequantize_absmax(gathered[1].data_ptr<std::uint8_t>() + first_block,
                               gathered[2].data_ptr<float>() + tensor.offset / kGroupElements,
                               blocks, tensor.mean_absmax, absmax.data());
      scales = absmax.data();
    } else {
      scales = gathered[1].data_ptr<float>() + first_block;
    }
    for_blocks(blocks, [&](std::int64_t first, std::int64_t end) {
      const std::int64_t begin = first * kNf4BlockSize;
      const std::int64_t count = std::min(end * kNf4BlockSize, tensor.numel) - begin;
      const std::int64_t at = tensor.offset + begin;
      if (out.scalar_type() == torch::kBFloat16)
        quant::dequantize_nf4_bf16(codes + at / 2, scales + first, count,
                                   reinterpret_cast<std::uint16_t*>(out.data_ptr()) + at);
      else
        quant::dequantize_nf4(codes + at / 2, scales + first, count, out.data_ptr<float>() + at);
    });
  }
  return direct ? out : out.to(dtype);
}

torch::Tensor QuantizedShard::dequantize_with_torch(const std::vector<torch::Tensor>& gathered,
                                                    torch::Dtype dtype) const {
  const auto fp32 = torch::TensorOptions().dtype(torch::kFloat32).device(device_);
  const torch::Tensor pairs = pair_table().to(device_);
  const torch::Tensor map = double_quant_ ? dynamic_map_tensor().to(device_) : torch::Tensor();
  torch::Tensor out = torch::empty({padded_}, fp32.dtype(dtype));
  for (const auto& tensor : tensors_) {
    const std::int64_t blocks = blocks_of(tensor.numel);
    const std::int64_t first_block = tensor.offset / kNf4BlockSize;
    torch::Tensor absmax;
    if (double_quant_) {
      const std::int64_t groups = (blocks + kAbsmaxGroupSize - 1) / kAbsmaxGroupSize;
      const torch::Tensor block_codes =
          gathered[1].narrow(0, first_block, blocks).to(torch::kInt64);
      const torch::Tensor group_absmax = gathered[2]
                                             .narrow(0, tensor.offset / kGroupElements, groups)
                                             .repeat_interleave(kAbsmaxGroupSize)
                                             .narrow(0, 0, blocks);
      // Two roundings, as dequantize_absmax: the product, then the sum.
      absmax = map.index_select(0, block_codes).mul(group_absmax).add(tensor.mean_absmax);
    } else {
      absmax = gathered[1].narrow(0, first_block, blocks);
    }
    const torch::Tensor bytes =
        gathered[0].narrow(0, tensor.offset / 2, (tensor.numel + 1) / 2).to(torch::kInt64);
    const torch::Tensor levels =
        pairs.index_select(0, bytes).reshape({-1}).narrow(0, 0, tensor.numel);
    const torch::Tensor scale = absmax.repeat_interleave(kNf4BlockSize).narrow(0, 0, tensor.numel);
    out.narrow(0, tensor.offset, tensor.numel).copy_(levels.mul(scale));
  }
  return out;
}

torch::Tensor QuantizedShard::dequantize_with_kernels(const std::vector<torch::Tensor>& gathered,
                                                      torch::Dtype dtype) const {
#if NSS_HAVE_CUDA
  const c10::cuda::CUDAGuard guard(device_);
  void* stream = c10::cuda::getCurrentCUDAStream(device_.index()).stream();
  const auto fp32 = torch::TensorOptions().dtype(torch::kFloat32).device(device_);
  const bool direct = dtype == torch::kFloat32 || dtype == torch::kBFloat16;
  torch::Tensor out = torch::empty({padded_}, fp32.dtype(direct ? dtype : torch::kFloat32));
  const auto* codes = gathered[0].data_ptr<std::uint8_t>();
  for (const auto& tensor : tensors_) {
    const std::int64_t blocks = blocks_of(tensor.numel);
    const std::int64_t first_block = tensor.offset / kNf4BlockSize;
    // A freed block is reused only in this stream's order: safe while the kernels run.
    torch::Tensor absmax;
    if (double_quant_) {
      absmax = torch::empty({blocks}, fp32);
      quant::dequantize_absmax_cuda(gathered[1].data_ptr<std::uint8_t>() + first_block,
                                    gathered[2].data_ptr<float>() + tensor.offset / kGroupElements,
                                    blocks, tensor.mean_absmax, absmax.data_ptr<float>(), stream);
    } else {
      absmax = gathered[1].narrow(0, first_block, blocks);
    }
    if (out.scalar_type() == torch::kBFloat16)
      quant::dequantize_nf4_cuda_bf16(
          codes + tensor.offset / 2, absmax.data_ptr<float>(), tensor.numel,
          reinterpret_cast<std::uint16_t*>(out.data_ptr()) + tensor.offset, stream);
    else
      quant::dequantize_nf4_cuda(codes + tensor.offset / 2, absmax.data_ptr<float>(), tensor.numel,
                                 out.data_ptr<float>() + tensor.offset, stream);
  }
  return direct ? out : out.to(dtype);
#else
  (void)gathered, (void)dtype;
  throw InternalError("fsdp", "the NF4 CUDA kernels need a CUDA libtorch");
#endif
}

std::int64_t QuantizedShard::bytes() const {
  return quant::nf4_storage(shard_, double_quant_).total();
}

}  // namespace nss::fsdp
