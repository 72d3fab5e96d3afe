// Causal attention over the documents of packed rows with PyTorch's
// variable-length kernels — at::_flash_attention_forward in bf16/fp16,
// at::_efficient_attention_forward in fp32: the rows' tokens as one sequence
// cut by int32 cumulative lengths — so no score outside a document is ever
// computed.
//
// Private ops whose signatures change between 2.x releases: compiled only
// against the libtorch they were written for (2.11), used only on CUDA, and
// only where the run plan chooses them (plan::PackedAttention::kVarlen, with
// NSS_VARLEN_ATTENTION=1) — off until their tests have run on a GPU
// (docs/gpu.md). Everywhere else the callers keep the block-diagonal mask or
// the loop per document.
#pragma once

#include <cstdint>

#include <torch/types.h>

namespace nss::model {

/// True when varlen_attention can run on tensors like `q` (CUDA; bf16/fp16
/// with head_dim a multiple of 8 up to 256, or fp32) in this build.
bool varlen_attention_applies(const torch::Tensor& q);

/// Attention of q, k, v [B, heads, S, head_dim] (k and v repeated to the
/// query heads), causal inside each sequence of `cumulative_lengths` (int32
/// on q's device, sequences + 1 entries over the B x S tokens in row order);
/// `longest` the longest sequence. Returns [B, heads, S, head_dim].
torch::Tensor varlen_attention(const torch::Tensor& q, const torch::Tensor& k,
                               const torch::Tensor& v, const torch::Tensor& cumulative_lengths,
                               std::int64_t longest);

}  // namespace nss::model
