// How one model's tensors divide over T tensor-parallel ranks, Megatron's
// plan read from the architecture description: attention heads and the MLP's
// intermediate features split column-wise (q, k, v, gate, up: their output
// rows, and their biases) and row-wise (o, down: their input columns, the
// bias whole, added once after the reduction); key/value heads replicated
// when T exceeds them (each group of T / kv_heads ranks holds one); the
// embedding and the LM head split by vocabulary rows, the vocabulary padded
// to a multiple of T with rows that are never a target; norms whole. LoRA
// adapters follow their layer: B's rows split with a column-parallel layer,
// A's columns with a row-parallel one, the other factor whole. Plain C++:
// the model, the memory model, the checkpoints and the preflight read the
// same plan.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "arch/architecture.h"
#include "config/config.h"

namespace nss::arch {

/// How a tensor divides over the tensor-parallel ranks.
enum class TensorSplit {
  kWhole,       // every tensor rank holds all of it (norms, a row-parallel layer's bias)
  kRows,        // dim 0 divides evenly: rank t holds rows [t*n/T, (t+1)*n/T)
  kColumns,     // dim 1 divides evenly (a row-parallel layer's input features)
  kHeadGroups,  // dim 0 by key/value head, each head held by kv_replicas ranks in a row
};

const char* split_name(TensorSplit split);

/// One tensor's place on the tensor ranks.
struct TensorPlacement {
  std::string name;  // block tensor ("self_attn.q_proj.weight"), or a model tensor
  TensorSplit split = TensorSplit::kWhole;
  std::vector<std::int64_t> shape;        // the whole tensor (Hugging Face layout; vocab padded)
  std::vector<std::int64_t> shard_shape;  // what one tensor rank holds
};

struct TensorParallelPlan {
  int size = 1;                            // T
  std::int64_t heads_per_rank = 0;         // query heads
  std::int64_t kv_heads_per_rank = 0;      // key/value heads (1 when replicated)
  std::int64_t kv_replicas = 1;            // tensor ranks that hold each key/value head
  std::int64_t intermediate_per_rank = 0;  // MLP features
  std::int64_t padded_vocab = 0;           // model.vocab_size rounded up to a multiple of T
  std::int64_t head_dim = 0;
  std::vector<TensorPlacement> block;  // in Architecture::block's order
  TensorPlacement embedding;           // model.embed_tokens.weight
  TensorPlacement head;                // lm_head.weight (the embedding's rows when tied)
};

/// The plan of `model` (described by `architecture`) over `size` tensor
/// ranks. UsageError (exit 2) naming parallel.tensor_parallel_size, the
/// model key and the sizes that work when `size` is below 1, does not
/// divide num_attention_heads or intermediate_size, or neither divides nor
/// is a multiple of num_key_value_heads.
TensorParallelPlan tensor_parallel_plan(const Architecture& architecture,
                                        const config::ModelConfig& model, int size);

/// The key/value head tensor rank `rank` holds, and the first of the query
/// heads it computes (both in the model's numbering).
std::int64_t first_kv_head(const TensorParallelPlan& plan, int rank);
std::int64_t first_query_head(const TensorParallelPlan& plan, int rank);

/// Which LoRA factor divides, and how, for an adapter on `projection`:
/// the adapter's A ([r, in]) and B ([out, r]) placements.
struct AdapterSplits {
  TensorSplit a = TensorSplit::kWhole;
  TensorSplit b = TensorSplit::kWhole;
};
AdapterSplits adapter_splits(const TensorParallelPlan& plan, const std::string& projection);

/// The placement of `projection`'s adapter factor A (`factor_a`) or B of
/// shape `shape` ([r, in] or [out, r]), named `name`.
TensorPlacement adapter_placement(const TensorParallelPlan& plan, const std::string& projection,
                                  bool factor_a, std::string name, std::vector<std::int64_t> shape);

/// The tensor sizes that divide a model: every T that tensor_parallel_plan
/// accepts, up to `limit`, for messages and the preflight's advice.
std::vector<int> valid_tensor_parallel_sizes(const config::ModelConfig& model, int limit);

}  // namespace nss::arch
