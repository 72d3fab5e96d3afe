// Tensor parallelism composed with FSDP/HSDP, trained for several steps
// against the unsharded model: at 2 ranks (T, G) = (2, 1); at 4 ranks
// (2, 2), (4, 1) and (R, G, T) = (2, 1, 2). Loss per step and the final
// parameters (put together from every tensor rank's part) within 1e-5
// relative, for full fine-tuning, LoRA with dropout, tied embeddings, packed
// documents, the chunked head, sequence parallelism on and off, key/value
// heads split (T = 2) and replicated (T = 4 over 2 key/value heads), and the
// Qwen3 and Gemma 3 families. The gradient norm (clipping is on) counts the
// tensors every tensor rank holds once.
#include <gtest/gtest.h>

#include "equivalence.h"
#include "model/initial_weights.h"
#include "model/param_spec.h"
#include "model/tensor_parallel_params.h"
#include "model/unit_layouts.h"
#include "plan/run_plan.h"
#include "tiny_batches.h"

namespace nss::train {
namespace {

using namespace testing;  // the equivalence harness

struct TensorLayout {
  int replicas, group, tensor;
};

std::vector<TensorLayout> layouts(int world) {
  if (world == 2) return {{1, 1, 2}};
  if (world == 4) return {{1, 2, 2}, {1, 1, 4}, {2, 1, 2}};
  return {};
}

// The harness's model with heads that T = 2 and 4 divide: 4 query heads
// over 2 key/value heads, an MLP of 96 features, a vocabulary of 259 (that
// T pads).
config::Config tensor_config(const Case& c, int tensor, bool sequence_parallel) {
  config::Config config = make_config(c);
  config.model.hidden_size = 48;
  config.model.num_attention_heads = 4;
  config.model.num_key_value_heads = 2;
  config.model.head_dim = 12;
  config.model.intermediate_size = 96;
  config.parallel.tensor_parallel_size = tensor;
  config.parallel.sequence_parallel = sequence_parallel;
  return config;
}

void expect_layouts_equivalent(const Case& c, bool sequence_parallel) {
  for (const TensorLayout& l : layouts(world_size())) {
    const config::Config config = tensor_config(c, l.tensor, sequence_parallel);
    SCOPED_TRACE(c.family + " at (" + std::to_string(l.replicas) + ", " + std::to_string(l.group) +
                 ", " + std::to_string(l.tensor) + ")" +
                 (sequence_parallel ? " sequence-parallel" : ""));
    Layout layout(l.group, l.tensor,
                  static_cast<int>(model::tensor_parallel_plan(config).kv_replicas));
    expect_equivalent(c, config, layout);
  }
}

TEST(TensorParallelTraining, FullFineTuningMatchesUnsharded) {
  expect_layouts_equivalent({8, 1, true, false, true}, true);
  expect_layouts_equivalent({8, 0, false, false, false, true, true, 5}, false);
}

TEST(TensorParallelTraining, LoraMatchesUnsharded) {
  expect_layouts_equivalent({8, 1, false, true, true, false, true, -1, true}, true);
  expect_layouts_equivalent({8, 2, true, true, false}, false);
}

TEST(TensorParallelTraining, OtherFamiliesMatchUnsharded) {
  for (const char* family : {"qwen3", "gemma3"}) {
    Case c{8, 1, true, true, true, false, true};
    c.family = family;
    expect_layouts_equivalent(c, true);
  }
}

// QLoRA (an NF4 base without double quantisation) on parts that hold whole
// NF4 blocks quantises each weight as the whole weight: equal to the same
// run without tensor parallelism (itself the NF4 round trip of the whole
// base, quantized_shard_test). A model wide enough for T = 4's parts.
TEST(TensorParallelTraining, QloraMatchesTheRunWithoutTensorParallelism) {
  Case c{8, 1, false, true, true};
  config::Config config = tensor_config(c, 1, true);
  config.model.hidden_size = 128;
  config.model.num_attention_heads = 8;
  config.model.head_dim = 32;
  config.model.intermediate_size = 512;
  config.training.lora.quantize_base = config::QuantizeBase::kNf4;
  Layout full(0);
  const Result expected = train_sharded(config, full.unit_comms(), full.step_comms(), 1);
  for (const TensorLayout& l : layouts(world_size())) {
    config.parallel.tensor_parallel_size = l.tensor;
    Layout layout(l.group, l.tensor,
                  static_cast<int>(model::tensor_parallel_plan(config).kv_replicas));
    const Result got = train_sharded(config, layout.unit_comms(), layout.step_comms(), 1, {}, false,
                                     false, nullptr, layout.tensor_comms());
    SCOPED_TRACE("T = " + std::to_string(l.tensor) + ", G = " + std::to_string(l.group));
    for (int s = 0; s < kSteps; ++s)
      EXPECT_NEAR(got.losses[s], expected.losses[s], 1e-5 * expected.losses[s]) << "step " << s;
    double largest = 0, worst = 0;
    for (const auto& [name, p] : expected.params) {
      largest = std::max(largest, p.abs().max().item<double>());
      worst = std::max(worst, (got.params.at(name) - p).abs().max().item<double>());
    }
    EXPECT_LE(worst / largest, 1e-5);
  }
}

// docs/architecture.md's tensor-parallel traffic of one micro-step (bus
// bytes), on the tensor group and on the key/value groups: every crossing of
// a parallel region moves the tokens' hidden states, once per forward (two
// with recompute) and once in backward; the head sums three float32 numbers
// per token per forward; each tensor whose gradient the ranks see parts of
// is summed once.
struct TensorTraffic {
  double tensor = 0, key_value = 0;
};

TensorTraffic expected_traffic(const config::Config& config, const ShardedLlama& model,
                               std::int64_t tokens) {
  const model::TensorParallel& tp = *model.tensor_parallel();
  const double t = tp.size(), c = (t - 1) / t, b = 4;  // fp32 on the CPU
  const double states = static_cast<double>(tokens * config.model.hidden_size) * b;
  const bool sp = tp.sequence_parallel, lora = config.training.lora.enabled;
  const double forwards = 2;  // activation checkpointing: forward and recompute
  TensorTraffic bytes;
  // Blocks: two regions, each an all-reduce (or all-gather + reduce-scatter)
  // per forward and one in backward.
  bytes.tensor += config.model.num_hidden_layers * 2 * (forwards + 1) * 2 * c * states;
  // Under LoRA nothing before the first block's attention trains (the
  // embedding and the norm are frozen): no gradient enters that region.
  if (lora) bytes.tensor -= (sp ? c : 2 * c) * states;
  // Embedding: a sum (reduce-scatter) per forward; backward only when it trains.
  const double embedding_forwards = lora ? 1 : forwards;
  bytes.tensor += embedding_forwards * (sp ? c : 2 * c) * states + (!lora && sp ? c * states : 0);
  // Head: into its region (an all-gather per forward with sequence
  // parallelism) and the gradient out of it; three float32 sums per token.
  bytes.tensor += (sp ? forwards * c * states + c * states : 2 * c * states);
  bytes.tensor += forwards * 3 * 2 * c * static_cast<double>(tokens) * 4;
  // Gradients summed over the ranks that share a tensor.
  for (const auto& spec : model::all_parameters(config.model, config.training.lora)) {
    if (!spec.trainable) continue;
    const arch::TensorPlacement placement = model::parameter_placement(*tp.plan, spec);
    const double part = static_cast<double>(layout::FlatParam{"", placement.shard_shape}.numel());
    const auto has = [&](const char* text) { return spec.name.find(text) != std::string::npos; };
    const bool row_parallel = has("o_proj") || has("down_proj");
    bool over_tensor = has("q_norm") || has("k_norm");
    over_tensor |= sp && (spec.role == model::ParamRole::kNorm ||
                          (spec.role == model::ParamRole::kBias && row_parallel));
    over_tensor |= spec.role == model::ParamRole::kLoraA && !row_parallel;
    over_tensor |= spec.role == model::ParamRole::kLoraB && row_parallel;
    if (over_tensor) bytes.tensor += 2 * c * part * b;
    if (placement.split == arch::TensorSplit::kHeadGroups) {
      const double k = static_cast<double>(tp.plan->kv_replicas);
      bytes.key_value += 2 * (k - 1) / k * part * b;
    }
  }
  return bytes;
}

TEST(TensorParallelTraining, TrafficMatchesTheFormula) {
  for (const TensorLayout& l : layouts(world_size()))
    for (const bool lora : {false, true})
      for (const bool sequence_parallel : {false, true}) {
        Case c{8, 1, false, lora, true};
        c.family = "qwen3";  // q and k norms, biases
        const config::Config config = tensor_config(c, l.tensor, sequence_parallel);
        Layout layout(l.group, l.tensor,
                      static_cast<int>(model::tensor_parallel_plan(config).kv_replicas));
        const plan::RunPlan plan = plan::make_run_plan(config, DeviceKind::kCpu, world_size());
        ShardedLlama model(config.model, config.training.lora, false, layout.unit_comms(), plan,
                           torch::kCPU, kSeqLen, layout.tensor_comms());
        model.initialize(model::InitialWeights(config.model, config.training.lora, 1));
        layout.groups.tensor->reset_stats();
        if (layout.key_value) layout.key_value->reset_stats();
        const auto batch =
            batch_of({layout.world->rank() / l.tensor}, config.model.vocab_size, 1, 1);
        model.loss(batch.inputs, batch.targets, batch.target_mask, nullptr).backward();
        const TensorTraffic want = expected_traffic(config, model, batch.inputs.numel());
        SCOPED_TRACE("T = " + std::to_string(l.tensor) + (lora ? " lora" : " full") +
                     (sequence_parallel ? " sequence-parallel" : ""));
        EXPECT_NEAR(layout.groups.tensor->stats().total_bytes(), want.tensor, 1e-9 * want.tensor);
        EXPECT_NEAR(layout.key_value ? layout.key_value->stats().total_bytes() : 0.0,
                    want.key_value, 1e-9 * want.key_value + 1e-9);
      }
}

}  // namespace
}  // namespace nss::train
