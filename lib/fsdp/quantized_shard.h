// This rank's shard of a unit's NF4 base (layout::FlatLayout's quantised buffer,
// QLoRA), a fsdp/shard_storage.h storage: the packed 4-bit codes and the
// block scales of the elements it owns, on the compute device. It is filled
// once from fp32 slices (quantize), gathered as those bytes (about 4.5 bits
// per element, 4.13 with double quantisation, instead of 16 or 32), and
// turned into the unit's compute-dtype buffer only when the unit runs
// (dequantize, its post-all-gather). Every parameter starts on a 64 x 256 group and every shard
// is whole groups, so a rank quantises its slices alone and gets the bytes
// of the whole tensor's quantisation at any world size; only double
// quantisation's per-tensor mean needs the other ranks' block scales, summed
// in block order (docs/model.md, "NF4 quantisation").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <torch/types.h>

#include "comm/communicator.h"
#include "fsdp/shard_storage.h"
#include "layout/flat_layout.h"

namespace nss::fsdp {

class QuantizedShard final : public ShardStorage {
 public:
  /// Rank `rank`'s shard of `layout`'s quantised buffer, zero until
  /// quantize(); its gathers are dequantised into `compute_dtype`.
  QuantizedShard(const layout::FlatLayout& layout, int rank, bool double_quant,
                 torch::Device device, torch::Dtype compute_dtype);

  /// quantize() of this rank's slices read through `filler`.
  void fill(const layout::FlatLayout& layout, const ParamFiller& filler) override;
  /// quantize_scales().
  void complete_fill(comm::Communicator& comm, const std::string& label) override;
  /// The codes, the block scales, and with double quantisation the group scales.
  std::vector<torch::Tensor> all_gather_inputs() const override;
  /// dequantize() into the compute dtype.
  torch::Tensor post_all_gather(const std::vector<torch::Tensor>& gathered) const override;
  /// Quantised once, never changed.
  std::int64_t version() const override { return 0; }

  /// Quantises this rank's shard, locally (DataError on NaN or Inf): `host`
  /// holds quantized_shard_size() fp32 values at their shard offsets
  /// (padding zero). The block scales are final only after quantize_scales().
  void quantize(const float* host);
  /// Stores the block scales; with double quantisation every rank's are
  /// all-gathered once for the tensors' means (a collective: call it on
  /// every rank, after every rank's quantize() succeeded).
  void quantize_scales(comm::Communicator& comm, const std::string& label);

  /// How dequantize() computes: kAuto is the table loops on the host and
  /// the NF4 CUDA kernels (quant/nf4_cuda.h) on a GPU, both bit-equal to
  /// kTorch, torch operations, for tests and builds without the kernels.
  enum class Dequantizer { kAuto, kTorch };
  /// The gathered (waited-for) bytes, in all_gather_inputs() order, as the
  /// unit's quantised buffer in `dtype`: quantized_padded() elements, only
  /// parameter elements written.
  torch::Tensor dequantize(const std::vector<torch::Tensor>& gathered, torch::Dtype dtype,
                           Dequantizer path = Dequantizer::kAuto) const;

  /// Bytes this rank holds (codes and scales).
  std::int64_t bytes() const override;
  bool double_quant() const { return double_quant_; }

 private:
  struct Tensor {  // one quantised parameter in the flat buffer
    std::int64_t offset, numel;
    float mean_absmax = 0;  // double quantisation's offset
  };
  torch::Tensor dequantize_on_host(const std::vector<torch::Tensor>& gathered,
                                   torch::Dtype dtype) const;
  torch::Tensor dequantize_with_torch(const std::vector<torch::Tensor>& gathered,
                                      torch::Dtype dtype) const;
  torch::Tensor dequantize_with_kernels(const std::vector<torch::Tensor>& gathered,
                                        torch::Dtype dtype) const;

  std::vector<Tensor> tensors_;
  std::vector<layout::ShardPiece> pieces_;
  std::int64_t shard_ = 0, padded_ = 0;
  bool double_quant_;
  torch::Device device_;
  torch::Dtype compute_dtype_;
  torch::Tensor codes_;         // uint8 [shard / 2]
  torch::Tensor block_scales_;  // fp32 absmax [shard / 64], or uint8 codes with double quantisation
  torch::Tensor group_scales_;  // fp32 [shard / 16384] with double quantisation
  torch::Tensor absmax_;        // host fp32 block absmax between quantize() and quantize_scales()
};

}  // namespace nss::fsdp
