// The tensor-parallel plan read from the architecture description: which
// tensors split by rows, by columns or by key/value head group, the shapes
// one rank holds, the vocabulary padding, GQA's heads per rank (each rank's
// query heads use the key/value head it holds), LoRA's factors, and the
// sizes refused with the keys and the sizes that work.
#include "arch/tensor_parallel.h"

#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/error.h"

namespace nss::arch {
namespace {

using Shape = std::vector<std::int64_t>;

config::ModelConfig tiny(const std::string& family) {
  config::ModelConfig
      m;  // hidden 64, 4 heads, 2 kv heads, head_dim 16, intermediate 176, vocab 258
  m.family = family;
  return m;
}

TensorParallelPlan plan_of(const config::ModelConfig& m, int size) {
  return tensor_parallel_plan(describe(m), m, size);
}

std::map<std::string, TensorPlacement> by_name(const TensorParallelPlan& plan) {
  std::map<std::string, TensorPlacement> out;
  for (const auto& t : plan.block) out[t.name] = t;
  return out;
}

TEST(TensorParallelPlan, SizeOneHoldsEverythingWhole) {
  const auto plan = plan_of(tiny("llama"), 1);
  for (const auto& t : plan.block) EXPECT_EQ(t.shard_shape, t.shape) << t.name;
  EXPECT_EQ(plan.padded_vocab, 258);
  EXPECT_EQ(plan.kv_replicas, 1);
  EXPECT_EQ(adapter_splits(plan, "q_proj").b, TensorSplit::kWhole);
}

TEST(TensorParallelPlan, LlamaAtTwoSplitsColumnAndRowParallelLayers) {
  const auto plan = plan_of(tiny("llama"), 2);
  EXPECT_EQ(plan.heads_per_rank, 2);
  EXPECT_EQ(plan.kv_heads_per_rank, 1);
  EXPECT_EQ(plan.kv_replicas, 1);
  EXPECT_EQ(plan.intermediate_per_rank, 88);
  const auto t = by_name(plan);
  const std::map<std::string, std::pair<TensorSplit, Shape>> expected{
      {"input_layernorm.weight", {TensorSplit::kWhole, {64}}},
      {"self_attn.q_proj.weight", {TensorSplit::kRows, {32, 64}}},
      {"self_attn.k_proj.weight", {TensorSplit::kRows, {16, 64}}},
      {"self_attn.v_proj.weight", {TensorSplit::kRows, {16, 64}}},
      {"self_attn.o_proj.weight", {TensorSplit::kColumns, {64, 32}}},
      {"post_attention_layernorm.weight", {TensorSplit::kWhole, {64}}},
      {"mlp.gate_proj.weight", {TensorSplit::kRows, {88, 64}}},
      {"mlp.up_proj.weight", {TensorSplit::kRows, {88, 64}}},
      {"mlp.down_proj.weight", {TensorSplit::kColumns, {64, 88}}}};
  ASSERT_EQ(t.size(), expected.size());
  for (const auto& [name, want] : expected) {
    EXPECT_EQ(t.at(name).split, want.first) << name;
    EXPECT_EQ(t.at(name).shard_shape, want.second) << name;
  }
  EXPECT_EQ(plan.embedding.split, TensorSplit::kRows);
  EXPECT_EQ(plan.embedding.shard_shape, (Shape{129, 64}));
  EXPECT_EQ(plan.head.name, "lm_head.weight");
}

TEST(TensorParallelPlan, TheVocabularyIsPaddedToAMultipleOfTheSize) {
  const auto plan = plan_of(tiny("llama"), 4);
  EXPECT_EQ(plan.padded_vocab, 260);
  EXPECT_EQ(plan.embedding.shape, (Shape{260, 64}));
  EXPECT_EQ(plan.head.shard_shape, (Shape{65, 64}));
  config::ModelConfig tied = tiny("llama");
  tied.tie_word_embeddings = true;
  EXPECT_EQ(plan_of(tied, 4).head.name, "model.embed_tokens.weight");
}

TEST(TensorParallelPlan, KeyValueHeadsAreReplicatedWhenTheSizeExceedsThem) {
  const auto plan = plan_of(tiny("llama"), 4);  // 2 kv heads on 4 ranks
  EXPECT_EQ(plan.kv_replicas, 2);
  EXPECT_EQ(plan.kv_heads_per_rank, 1);
  const auto t = by_name(plan);
  EXPECT_EQ(t.at("self_attn.k_proj.weight").split, TensorSplit::kHeadGroups);
  EXPECT_EQ(t.at("self_attn.k_proj.weight").shard_shape, (Shape{16, 64}));
  EXPECT_EQ(t.at("self_attn.q_proj.weight").shard_shape, (Shape{16, 64}));
  EXPECT_EQ((std::vector<std::int64_t>{first_kv_head(plan, 0), first_kv_head(plan, 1),
                                       first_kv_head(plan, 2), first_kv_head(plan, 3)}),
            (std::vector<std::int64_t>{0, 0, 1, 1}));
  EXPECT_EQ(adapter_splits(plan, "v_proj").b, TensorSplit::kHeadGroups);
}

// Every rank's query heads use, under grouped-query attention, exactly the
// key/value heads that rank holds.
TEST(TensorParallelPlan, EachRanksQueryHeadsUseItsKeyValueHeads) {
  for (const auto& [heads, kv] :
       std::vector<std::pair<int, int>>{{32, 8}, {14, 2}, {9, 3}, {8, 1}}) {
    config::ModelConfig m = tiny("llama");
    m.num_attention_heads = heads;
    m.num_key_value_heads = kv;
    m.head_dim = 8;
    m.hidden_size = heads * 8;
    m.intermediate_size = 4 * 9 * 7 * 8;
    for (int size : valid_tensor_parallel_sizes(m, 64)) {
      const auto plan = plan_of(m, size);
      const int group = heads / kv;  // query heads per key/value head
      for (int rank = 0; rank < size; ++rank) {
        const auto q0 = first_query_head(plan, rank), k0 = first_kv_head(plan, rank);
        for (std::int64_t q = q0; q < q0 + plan.heads_per_rank; ++q) {
          const std::int64_t uses = q / group;
          EXPECT_GE(uses, k0) << heads << "/" << kv << " T=" << size << " rank " << rank;
          EXPECT_LT(uses, k0 + plan.kv_heads_per_rank)
              << heads << "/" << kv << " T=" << size << " rank " << rank;
        }
      }
    }
  }
}

TEST(TensorParallelPlan, BiasesAndNormsFollowTheirLayers) {
  const auto qwen2 = by_name(plan_of(tiny("qwen2"), 2));
  EXPECT_EQ(qwen2.at("self_attn.q_proj.bias").split, TensorSplit::kRows);
  EXPECT_EQ(qwen2.at("self_attn.q_proj.bias").shard_shape, (Shape{32}));
  config::ModelConfig llama = tiny("llama");
  llama.attention_bias = true;
  const auto with_o_bias = by_name(plan_of(llama, 2));
  EXPECT_EQ(with_o_bias.at("self_attn.o_proj.bias").split, TensorSplit::kWhole);  // added once
  config::ModelConfig gemma = tiny("gemma3");
  gemma.layer_types = {"sliding_attention", "full_attention"};
  gemma.sliding_window = 16;
  const auto g = by_name(plan_of(gemma, 2));
  EXPECT_EQ(g.at("self_attn.q_norm.weight").split, TensorSplit::kWhole);
  EXPECT_EQ(g.at("pre_feedforward_layernorm.weight").split, TensorSplit::kWhole);
  EXPECT_EQ(g.at("self_attn.k_proj.weight").split, TensorSplit::kRows);
}

TEST(TensorParallelPlan, AdaptersFollowTheirLayersSplit) {
  const auto plan = plan_of(tiny("llama"), 2);
  for (const char* column : {"q_proj", "k_proj", "v_proj", "gate_proj", "up_proj"}) {
    EXPECT_EQ(adapter_splits(plan, column).a, TensorSplit::kWhole) << column;
    EXPECT_EQ(adapter_splits(plan, column).b, TensorSplit::kRows) << column;
  }
  for (const char* row : {"o_proj", "down_proj"}) {
    EXPECT_EQ(adapter_splits(plan, row).a, TensorSplit::kColumns) << row;
    EXPECT_EQ(adapter_splits(plan, row).b, TensorSplit::kWhole) << row;
  }
}

void expect_refused(const config::ModelConfig& m, int size, const std::string& why,
                    const std::string& sizes) {
  try {
    plan_of(m, size);
    FAIL() << "accepted tensor_parallel_size " << size;
  } catch (const UsageError& e) {
    EXPECT_EQ(e.code(), ExitCode::kUsage);
    EXPECT_NE(e.message().find("parallel.tensor_parallel_size"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find(why), std::string::npos) << e.message();
    EXPECT_NE(e.hint().find("use one of: " + sizes), std::string::npos) << e.hint();
  }
}

TEST(TensorParallelPlan, SizesThatDoNotDivideTheModelAreRefused) {
  expect_refused(tiny("llama"), 3, "does not divide model.num_attention_heads (4)", "1, 2, 4");
  expect_refused(tiny("llama"), 0, "is 0", "1, 2, 4");
  config::ModelConfig narrow = tiny("llama");
  narrow.intermediate_size = 170;  // 2 x 5 x 17
  expect_refused(narrow, 4, "does not divide model.intermediate_size (170)", "1, 2");
  config::ModelConfig odd = tiny("llama");
  odd.num_attention_heads = 6;
  odd.num_key_value_heads = 3;
  odd.hidden_size = 96;
  odd.intermediate_size = 192;
  expect_refused(odd, 2, "neither divides model.num_key_value_heads (3)", "1, 3, 6");
}

}  // namespace
}  // namespace nss::arch
