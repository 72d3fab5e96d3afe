#include "arch/tensor_parallel.h"

#include <algorithm>

#include "core/error.h"

namespace nss::arch {
namespace {

bool is_column_parallel(const std::string& projection) {
  return projection == "q_proj" || projection == "k_proj" || projection == "v_proj" ||
         projection == "gate_proj" || projection == "up_proj";
}

bool is_key_value(const std::string& projection) {
  return projection == "k_proj" || projection == "v_proj";
}

// Why `size` cannot divide `m`, or "" when it can.
std::string why_not(const config::ModelConfig& m, int size) {
  const std::int64_t t = size;
  if (m.num_attention_heads % t != 0)
    return "does not divide model.num_attention_heads (" + std::to_string(m.num_attention_heads) +
           ")";
  if (m.intermediate_size % t != 0)
    return "does not divide model.intermediate_size (" + std::to_string(m.intermediate_size) + ")";
  const std::int64_t kv = m.num_key_value_heads;
  if (kv % t != 0 && t % kv != 0)
    return "neither divides model.num_key_value_heads (" + std::to_string(kv) +
           ") nor is a multiple of it";
  return "";
}

std::string size_list(const std::vector<int>& sizes) {
  std::string text;
  for (int s : sizes) text += (text.empty() ? "" : ", ") + std::to_string(s);
  return text;
}

void check_size(const config::ModelConfig& m, int size) {
  const std::string hint =
      "use one of: " + size_list(valid_tensor_parallel_sizes(m, std::max(size, 64)));
  if (size < 1)
    throw UsageError("arch", "parallel.tensor_parallel_size is " + std::to_string(size), hint);
  const std::string why = why_not(m, size);
  if (!why.empty())
    throw UsageError("arch", "parallel.tensor_parallel_size " + std::to_string(size) + " " + why,
                     hint);
}

TensorPlacement place(std::string name, TensorSplit split, std::vector<std::int64_t> shape,
                      const TensorParallelPlan& plan) {
  TensorPlacement p{std::move(name), split, shape, shape};
  if (split == TensorSplit::kRows) p.shard_shape[0] /= plan.size;
  if (split == TensorSplit::kColumns) p.shard_shape[1] /= plan.size;
  if (split == TensorSplit::kHeadGroups) p.shard_shape[0] = plan.kv_heads_per_rank * plan.head_dim;
  return p;
}

// A block tensor's split: a column-parallel layer's weight and bias by
// output rows (key/value heads by head group when replicated), a
// row-parallel layer's weight by input columns; norms and a row-parallel
// layer's bias whole.
TensorSplit block_split(const BlockTensor& t, const TensorParallelPlan& plan) {
  if (t.kind != TensorKind::kProjection && t.kind != TensorKind::kBias) return TensorSplit::kWhole;
  if (is_column_parallel(t.projection))
    return is_key_value(t.projection) && plan.kv_replicas > 1 ? TensorSplit::kHeadGroups
                                                              : TensorSplit::kRows;
  return t.kind == TensorKind::kProjection ? TensorSplit::kColumns : TensorSplit::kWhole;
}

}  // namespace

const char* split_name(TensorSplit split) {
  switch (split) {
    case TensorSplit::kWhole:
      return "whole";
    case TensorSplit::kRows:
      return "rows";
    case TensorSplit::kColumns:
      return "columns";
    case TensorSplit::kHeadGroups:
      return "head_groups";
  }
  return "?";
}

TensorParallelPlan tensor_parallel_plan(const Architecture& architecture,
                                        const config::ModelConfig& m, int size) {
  check_size(m, size);
  TensorParallelPlan plan;
  plan.size = size;
  plan.heads_per_rank = m.num_attention_heads / size;
  plan.kv_replicas = size > m.num_key_value_heads ? size / m.num_key_value_heads : 1;
  plan.kv_heads_per_rank = m.num_key_value_heads * plan.kv_replicas / size;
  plan.intermediate_per_rank = m.intermediate_size / size;
  plan.padded_vocab = (m.vocab_size + size - 1) / size * size;
  plan.head_dim = m.head_dim;
  for (const auto& t : architecture.block)
    plan.block.push_back(place(t.name, block_split(t, plan), t.shape, plan));
  const std::vector<std::int64_t> vocab_rows{plan.padded_vocab, m.hidden_size};
  plan.embedding = place("model.embed_tokens.weight", TensorSplit::kRows, vocab_rows, plan);
  plan.head = place(m.tie_word_embeddings ? "model.embed_tokens.weight" : "lm_head.weight",
                    TensorSplit::kRows, vocab_rows, plan);
  return plan;
}

std::int64_t first_kv_head(const TensorParallelPlan& plan, int rank) {
  return plan.kv_replicas > 1 ? rank / plan.kv_replicas : rank * plan.kv_heads_per_rank;
}

std::int64_t first_query_head(const TensorParallelPlan& plan, int rank) {
  return rank * plan.heads_per_rank;
}

AdapterSplits adapter_splits(const TensorParallelPlan& plan, const std::string& projection) {
  if (plan.size == 1) return {};
  if (is_column_parallel(projection))
    return {TensorSplit::kWhole, is_key_value(projection) && plan.kv_replicas > 1
                                     ? TensorSplit::kHeadGroups
                                     : TensorSplit::kRows};
  return {TensorSplit::kColumns, TensorSplit::kWhole};
}

TensorPlacement adapter_placement(const TensorParallelPlan& plan, const std::string& projection,
                                  bool factor_a, std::string name,
                                  std::vector<std::int64_t> shape) {
  const AdapterSplits splits = adapter_splits(plan, projection);
  return place(std::move(name), factor_a ? splits.a : splits.b, std::move(shape), plan);
}

std::vector<int> valid_tensor_parallel_sizes(const config::ModelConfig& model, int limit) {
  std::vector<int> sizes;
  for (int t = 1; t <= limit; ++t)
    if (why_not(model, t).empty()) sizes.push_back(t);
  return sizes;
}

}  // namespace nss::arch
