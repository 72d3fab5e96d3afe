// The Llama forward pass as functions of explicit parameter tensors, with
// Hugging Face LlamaForCausalLM semantics. FSDP runs each unit on views of its
// gathered flat buffer; LlamaModel runs the same functions on whole tensors.
// Parameter lists are in unit_parameters() order, in the compute dtype.
#pragma once

#include <functional>
#include <vector>

#include <torch/types.h>

#include "arch/architecture.h"
#include "config/config.h"
#include "model/layer_plan.h"
#include "model/lora_dropout.h"
#include "model/rotary_embedding.h"
#include "plan/run_plan.h"

namespace nss::model {

/// How attention stays inside each document of a packed row: the run plan's
/// choice (plan::PackedAttention; per document on the CPU, 2x faster than
/// the mask at seq_len 256 and 7x at 1024 with four documents a row,
/// scripts/bench/packing_throughput.sh).
using DocumentAttention = plan::PackedAttention;

/// Packed rows of whole documents (data.packing documents or none): each
/// token's position in its document and the keys each query may attend to.
/// Absent (nullptr) for windows: positions 0..S-1, plain causal attention.
struct DocumentMask {
  struct Span {
    std::int64_t first = 0, end = 0;  // input slots [first, end) of one document
    bool padding = false;             // attends to nothing: its output is zero
  };
  torch::Tensor positions;  // int64 [B, S], restarting at 0 in every document
  torch::Tensor allowed;    // the mask: bool [B, 1, S, S], key j <= query i of one document
  std::vector<std::vector<Span>> spans;  // or the spans of each row, in order
  torch::Tensor cumulative_lengths;      // kVarlen: int32, every span of every row
  std::int64_t longest_span = 0;         // kVarlen
};

/// The attention layout of rows whose inputs carry `positions` and
/// `segments` (int64 [B, S]; the document index inside the row, -1 for
/// padding; a row's documents are contiguous). Padding is no one's key; with
/// the mask it attends to earlier padding (a softmax needs a key), per
/// document its attention output is zero: no label reads it either way.
DocumentMask document_mask(const torch::Tensor& positions, const torch::Tensor& segments,
                           DocumentAttention how);

/// The same, attending as plan::packed_attention chooses for the tensors'
/// device with this process's switches (for tools without a run plan).
DocumentMask document_mask(const torch::Tensor& positions, const torch::Tensor& segments);

/// Unit 0: token ids int64 [B, S] -> hidden [B, S, H], times the family's
/// embedding scale (Gemma: sqrt(hidden_size), rounded to the weight's dtype).
/// With `tp` (T > 1) `weight` is this rank's rows of the padded vocabulary
/// (arch/tensor_parallel.h) and the result is whole on every tensor rank,
/// or with sequence parallelism this rank's [B, S / T, H] of it.
torch::Tensor embedding_forward(const torch::Tensor& tokens, const torch::Tensor& weight,
                                const arch::Architecture& architecture,
                                const TensorParallel* tp = nullptr);

/// HF LlamaRMSNorm: normalised in float32, cast back, then scaled by
/// `weight`; with kOnePlusWeight Gemma3RMSNorm: normalised and scaled by
/// 1 + weight in float32, then cast back.
torch::Tensor rms_norm(const torch::Tensor& x, const torch::Tensor& weight, double eps,
                       arch::NormScale scale = arch::NormScale::kWeight);

/// The final norm before the head, the family's kind of RMSNorm.
torch::Tensor final_norm(const torch::Tensor& hidden, const torch::Tensor& weight,
                         const config::ModelConfig& model);

/// The factor q.k is scaled by when it is not head_dim^-1/2
/// (query_pre_attn_scalar^-1/2, Gemma); 0 when it is.
double attention_scale(const config::ModelConfig& model, const arch::Architecture& architecture);

/// Units 1..L: one decoder block (pre-norm attention with grouped-query heads
/// and the layer's RoPE and window, pre-norm SwiGLU MLP, both residual). LoRA
/// adapters add B(A(dropout(x))) * alpha / rank to their projections;
/// `dropout` nullptr (evaluation) or lora.dropout == 0 disables dropout.
/// `documents` (packed rows) restarts RoPE per document and keeps attention
/// inside each. With layer.tensor_parallel (T > 1) `params` are this rank's
/// parts of the block's tensors (arch::TensorParallelPlan) and `hidden` whole
/// on every tensor rank, or with sequence parallelism [B, S / T, H], this
/// rank's piece of the sequence; the result is laid out as `hidden`.
torch::Tensor decoder_block_forward(const torch::Tensor& hidden,
                                    const std::vector<torch::Tensor>& params,
                                    const config::ModelConfig& model,
                                    const config::LoraConfig& lora, const LayerPlan& layer,
                                    const DropoutKey* dropout, const DocumentMask* documents);

/// A decoder block's attention: rotated queries [B, heads, S, D] and the
/// block's new rotated keys and values [B, kv_heads, S, D] -> [B, heads, S, D].
/// Incremental decoding (lib/generate) passes one that reads a KV cache.
using BlockAttention = std::function<torch::Tensor(const torch::Tensor& q, const torch::Tensor& k,
                                                   const torch::Tensor& v)>;

/// The attention decoder_block_forward(..., documents) computes for
/// `layer`: causal, or inside each document of packed rows, and within the
/// layer's window when it has one; `documents` must outlive it.
BlockAttention block_attention(const config::ModelConfig& model, const DocumentMask* documents,
                               const LayerPlan& layer);
/// The decoder block above with the layer's RoPE at `positions` (int64
/// [B, S]; undefined: 0..S-1) and its attention computed by `attend`.
torch::Tensor decoder_block_forward(const torch::Tensor& hidden,
                                    const std::vector<torch::Tensor>& params,
                                    const config::ModelConfig& model,
                                    const config::LoraConfig& lora, const LayerPlan& layer,
                                    const DropoutKey* dropout, const torch::Tensor& positions,
                                    const BlockAttention& attend);

/// Attention of q [B, heads, S, D] over k, v [B, heads, T, D]: causal when
/// `allowed` is undefined, else restricted to it (bool, broadcast to [B, 1,
/// S, T], true where query i may read key j; every row needs one); q.k
/// scaled by `scale` (0: D^-1/2); softmax in float32.
torch::Tensor masked_attention(const torch::Tensor& q, const torch::Tensor& k,
                               const torch::Tensor& v, const torch::Tensor& allowed,
                               double scale = 0);

/// Sliding-window attention's keys, bool [queries, keys]: the queries are the
/// last `queries` of `keys` slots, and query i reads key j when 0 <= i - j <
/// window (HF: the query and window - 1 keys before it; causal too).
torch::Tensor sliding_window_mask(std::int64_t queries, std::int64_t keys, std::int64_t window,
                                  torch::Device device);

/// Unit L + 1 without the loss: logits [B, S, V] in the compute dtype.
torch::Tensor head_logits_forward(const torch::Tensor& hidden, const torch::Tensor& norm_weight,
                                  const torch::Tensor& lm_head_weight,
                                  const config::ModelConfig& model);

/// Unit L + 1: sum_t w_t * CE_t, the next-token cross-entropy computed in
/// float32 from the logits, weighted per token by `weights` float32 [B, S]
/// (the trainer passes mask_t / target tokens in the global batch; a weight
/// of 0 takes the token out of the loss and its gradient). targets int64
/// [B, S]. With tied embeddings `lm_head_weight` is the embedding weight.
/// `chunk_tokens` > 0 (training.loss_chunk_tokens): the logits, the loss and
/// its gradients a chunk of tokens at a time (chunked_head.h), never all
/// [B, S, V] logits at once; per-example parameters (DP-SGD's leaves with a
/// leading row dimension) take the unchunked path, as does chunk_tokens 0.
/// With `tp` (T > 1) `lm_head_weight` is this rank's rows of the padded
/// vocabulary, `hidden` laid out as decoder_block_forward's, the targets and
/// weights whole; the loss, the same on every tensor rank, is summed over
/// the ranks' rows a chunk at a time (chunk_tokens 0: one chunk).
torch::Tensor head_loss_forward(const torch::Tensor& hidden, const torch::Tensor& norm_weight,
                                const torch::Tensor& lm_head_weight, const torch::Tensor& targets,
                                const torch::Tensor& weights, const config::ModelConfig& model,
                                std::int64_t chunk_tokens = 0, const TensorParallel* tp = nullptr);

}  // namespace nss::model
