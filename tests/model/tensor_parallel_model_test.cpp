// The model's tensor-parallel forward and backward against the whole model,
// at 1, 2 and 4 MPI ranks: the embedding, two decoder blocks and the head
// (the loss) computed on each tensor rank's parts of the tensors
// (arch/tensor_parallel.h) give the whole model's loss on every rank and,
// for every parameter, that rank's part of the whole model's gradient.
// Cases: full fine-tuning and LoRA (with dropout), sequence parallelism on
// and off, packed documents, the chunked head, tied embeddings, biases
// (Qwen2), per-head norms and sandwich norms (Gemma 3), key/value heads
// split (T <= 2) and replicated (T = 4, two key/value heads), and a
// vocabulary (258) that T = 4 pads.
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <mpi.h>
#include <torch/torch.h>

#include "comm/mpi_communicator.h"
#include "comm/shard_groups.h"
#include "config/model_presets.h"
#include "model/layer_plan.h"
#include "model/llama_functional.h"
#include "model/llama_model.h"
#include "model/tensor_parallel_params.h"
#include "model/tensor_parallel_shards.h"
#include "support/mpi_world.h"

namespace nss::model {
namespace {

constexpr std::int64_t kBatch = 2, kSeq = 8;

struct Case {
  std::string family = "llama";
  bool lora = false;
  double dropout = 0;
  bool sequence_parallel = false;
  bool packed = false;
  bool tied = false;
  std::int64_t chunk_tokens = 0;
};

std::string describe(const Case& c) {
  return c.family + (c.lora ? " lora" : " full") + (c.dropout > 0 ? " dropout" : "") +
         (c.sequence_parallel ? " sequence-parallel" : "") + (c.packed ? " packed" : "") +
         (c.tied ? " tied" : "") + " chunk " + std::to_string(c.chunk_tokens);
}

config::ModelConfig model_of(const Case& c) {
  config::ModelConfig m;
  EXPECT_TRUE(config::apply_model_preset("tiny", m));  // 4 heads, 2 kv heads, vocab 258
  m.family = c.family;
  m.tie_word_embeddings = c.tied;
  if (c.family == "gemma3") {
    m.query_pre_attn_scalar = 24;
    m.sliding_window = 4;
    m.rope_local_theta = 1e4;
    m.layer_types = {"sliding_attention", "full_attention"};
  }
  return m;
}

config::LoraConfig lora_of(const Case& c) {
  config::LoraConfig lora;
  lora.enabled = c.lora;
  lora.rank = 4;
  lora.alpha = 8;
  lora.dropout = c.dropout;
  lora.targets = projection_names();
  return lora;
}

// The inputs of one micro-batch, the same on every rank.
struct Batch {
  torch::Tensor tokens, targets, weights, positions, segments;
};

Batch batch_of(const config::ModelConfig& m) {
  torch::manual_seed(11);
  Batch b;
  b.tokens = torch::randint(m.vocab_size, {kBatch, kSeq}, torch::kInt64);
  b.targets = torch::randint(m.vocab_size, {kBatch, kSeq}, torch::kInt64);
  b.targets[0][0] = m.vocab_size - 1;  // the last token of the vocabulary is a target too
  b.weights = torch::rand({kBatch, kSeq}) * (torch::rand({kBatch, kSeq}) > 0.2);
  // Row 0: documents of 3 and 5 tokens; row 1: 6 tokens, 2 of padding.
  b.positions = torch::tensor({0, 1, 2, 0, 1, 2, 3, 4, 0, 1, 2, 3, 4, 5, 0, 1}).view({2, 8});
  b.segments = torch::tensor({0, 0, 0, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, -1, -1}).view({2, 8});
  return b;
}

// Every tensor of every unit as a leaf that requires grad.
std::vector<std::vector<torch::Tensor>> leaves(
    const std::vector<std::vector<torch::Tensor>>& units) {
  std::vector<std::vector<torch::Tensor>> out;
  for (const auto& unit : units) {
    out.emplace_back();
    for (const auto& t : unit) out.back().push_back(t.detach().clone().requires_grad_(true));
  }
  return out;
}

// The loss of embedding -> blocks -> head on `units` (whole, or this
// rank's parts with `tp`).
torch::Tensor model_loss(const std::vector<std::vector<torch::Tensor>>& units,
                         const config::ModelConfig& m, const config::LoraConfig& lora,
                         const Case& c, const Batch& b, const TensorParallel* tp) {
  LayerPlans plans(m, kSeq, torch::kCPU);
  plans.set_tensor_parallel(tp);
  const DocumentMask documents =
      document_mask(b.positions, b.segments, DocumentAttention::kPerDocument);
  const bool tied = m.tie_word_embeddings;
  torch::Tensor hidden =
      embedding_forward(b.tokens, units.front().front(), plans.architecture(), tp);
  for (int layer = 0; layer < plans.size(); ++layer) {
    DropoutKey key{7, 3, {5, 9}, layer};
    hidden = decoder_block_forward(hidden, units[layer + 1], m, lora, plans[layer],
                                   c.dropout > 0 ? &key : nullptr, c.packed ? &documents : nullptr);
  }
  const auto& head = units.back();
  return head_loss_forward(hidden, head.front(), tied ? units.front().front() : head.at(1),
                           b.targets, b.weights, m, c.chunk_tokens, tp);
}

struct TensorGroups {
  std::unique_ptr<comm::MpiCommunicator> tensor, key_value;
};

// Consecutive groups of `size` ranks.
TensorGroups tensor_groups(int size, const arch::TensorParallelPlan& plan) {
  TensorGroups groups;
  const int rank = testing::world_rank();
  MPI_Comm part;
  MPI_Comm_split(MPI_COMM_WORLD, rank / size, rank, &part);
  groups.tensor = comm::MpiCommunicator::create(part);
  MPI_Comm_free(&part);
  groups.key_value =
      comm::split_key_value_groups(*groups.tensor, static_cast<int>(plan.kv_replicas));
  return groups;
}

// The largest difference relative to the largest magnitude of `want`.
double relative_difference(const torch::Tensor& got, const torch::Tensor& want) {
  const double scale = std::max(want.abs().max().item<double>(), 1e-12);
  return (got - want).abs().max().item<double>() / scale;
}

void expect_equivalent(const Case& c, int tensor_size) {
  SCOPED_TRACE(describe(c) + " at T = " + std::to_string(tensor_size));
  const config::ModelConfig m = model_of(c);
  const config::LoraConfig lora = lora_of(c);
  LlamaModel model(m, lora, torch::kFloat32);
  model.load(InitialWeights(m, lora, 3));
  std::vector<std::vector<torch::Tensor>> whole_units;
  for (int unit = 0; unit < model.num_units(); ++unit) {
    whole_units.push_back(model.unit_tensors(unit));
    // LoRA's B starts at zero; random values make every adapter gradient count.
    for (std::size_t i = 0; i < whole_units.back().size(); ++i)
      if (model.unit_specs(unit)[i].role == ParamRole::kLoraB)
        whole_units.back()[i] = torch::randn_like(whole_units.back()[i]) * 0.1;
  }
  const Batch b = batch_of(m);
  const auto whole = leaves(whole_units);
  const torch::Tensor want = model_loss(whole, m, lora, c, b, nullptr);
  want.backward();

  const arch::TensorParallelPlan plan =
      arch::tensor_parallel_plan(arch::describe(m), m, tensor_size);
  const TensorGroups groups = tensor_groups(tensor_size, plan);
  const int rank = groups.tensor->rank();
  std::vector<std::vector<torch::Tensor>> part_units;
  for (int unit = 0; unit < model.num_units(); ++unit) {
    part_units.emplace_back();
    for (std::size_t i = 0; i < whole_units[unit].size(); ++i)
      part_units.back().push_back(tensor_parallel_part(
          whole_units[unit][i], parameter_placement(plan, model.unit_specs(unit)[i]), plan, rank));
  }
  const auto parts = leaves(part_units);
  const TensorParallel tp{groups.tensor.get(), groups.key_value.get(), &plan, c.sequence_parallel};
  const torch::Tensor got = model_loss(parts, m, lora, c, b, &tp);
  got.backward();

  EXPECT_LT(relative_difference(got, want), 1e-6)
      << got.item<double>() << " vs " << want.item<double>();
  for (int unit = 0; unit < model.num_units(); ++unit)
    for (std::size_t i = 0; i < parts[unit].size(); ++i) {
      const ParamSpec& spec = model.unit_specs(unit)[i];
      const torch::Tensor want_grad =
          tensor_parallel_part(whole[unit][i].grad(), parameter_placement(plan, spec), plan, rank);
      ASSERT_TRUE(parts[unit][i].grad().defined()) << spec.name;
      EXPECT_LT(relative_difference(parts[unit][i].grad(), want_grad), 1e-5) << spec.name;
    }
}

std::vector<int> tensor_sizes() {
  const int world = testing::world_size();
  return world == 4 ? std::vector<int>{2, 4} : std::vector<int>{world};
}

TEST(TensorParallelModel, FullFineTuningEqualsTheWholeModel) {
  for (int t : tensor_sizes()) {
    expect_equivalent({}, t);
    expect_equivalent({"llama", false, 0, true, true, false, 5}, t);
  }
}

TEST(TensorParallelModel, LoraWithDropoutEqualsTheWholeModel) {
  for (int t : tensor_sizes()) {
    expect_equivalent({"llama", true, 0.25, false, true, false, 0}, t);
    expect_equivalent({"llama", true, 0.25, true, false, true, 6}, t);
  }
}

TEST(TensorParallelModel, OtherFamiliesEqualTheWholeModel) {
  for (int t : tensor_sizes()) {
    expect_equivalent({"qwen2", true, 0, true, true, false, 0}, t);
    expect_equivalent({"gemma3", false, 0, false, false, true, 0}, t);
    expect_equivalent({"gemma3", true, 0, true, true, true, 7}, t);
  }
}

}  // namespace
}  // namespace nss::model
