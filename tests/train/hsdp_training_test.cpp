// Hybrid sharding (parallel.shard_group_size) at every group size that
// divides the world: at 4 ranks 2 x 2, 1 x 4 and 4 x 1 (replicas x group
// size). Each equals the unsharded reference (relative 1e-5) and the others;
// the replicas of a shard stay bit-identical; the gradient norm (and so
// clipping) covers the model once, not once per replica; the traffic of each
// level equals the two-level formula (docs/architecture.md).
#include <cmath>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "comm/mpi_communicator.h"
#include "comm/shard_groups.h"
#include "equivalence.h"
#include "model/initial_weights.h"
#include "optim/adamw.h"
#include "tiny_batches.h"
#include "train/sharded_llama.h"
#include "train/sharded_state.h"

namespace nss::train {
namespace {

using namespace testing;  // the equivalence harness

TEST(HybridSharding, EveryGroupSizeMatchesUnsharded) {
  for (const int g : group_sizes(world_size())) {
    Layout layout(g);
    for (const Case& c : {Case{8, 1, false, false, true}, Case{8, 1, true, true, true},
                          Case{8, 0, false, false, false, true}, Case{8, 2, true, false, true}})
      expect_equivalent(c, layout.unit_comms(), layout.step_comms());
    // The other families' features under both levels (Gemma 3's parameters
    // within 1e-4: sharded_training_test's EveryFamilyMatchesUnsharded says why).
    Tolerance tolerance;
    tolerance.params = 1e-4;
    for (const char* family : {"qwen3", "gemma3"}) {
      Case c{8, 1, true, true, true, false, true};
      c.family = family;
      expect_equivalent(c, layout.unit_comms(), layout.step_comms(), {}, tolerance);
    }
  }
}

// The layouts agree with each other as closely as with the reference, and
// the replicas of every shard hold bit-identical masters after training.
TEST(HybridSharding, LayoutsAgreeAndReplicasStayIdentical) {
  const config::Config config = make_config({8, 1, true, true, true});
  Layout full(0);
  const Result expected = train_sharded(config, full.unit_comms(), full.step_comms(), 1);
  for (const int g : group_sizes(world_size())) {
    Layout layout(g);
    const Result hybrid = train_sharded(config, layout.unit_comms(), layout.step_comms(), 1);
    for (int s = 0; s < kSteps; ++s)
      EXPECT_NEAR(hybrid.losses[s], expected.losses[s], 1e-5 * std::abs(expected.losses[s]))
          << "group size " << g << " step " << s + 1;
    double largest = 0, worst = 0;
    for (const auto& [name, p] : expected.params) {
      largest = std::max(largest, p.abs().max().item<double>());
      worst = std::max(worst, (hybrid.params.at(name) - p).abs().max().item<double>());
    }
    EXPECT_LE(worst / largest, 1e-5) << "group size " << g;

    // Every replica's trained parameters, gathered over its replica group.
    auto& replicas = *layout.groups.replicate;
    for (const auto& [name, p] : hybrid.params) {
      const torch::Tensor mine = p.reshape(-1).contiguous();
      torch::Tensor all = torch::empty({mine.numel() * replicas.size()}, mine.options());
      replicas.all_gather(mine.data_ptr(), all.data_ptr(), static_cast<std::size_t>(mine.numel()),
                          DType::kFloat32);
      for (int r = 0; r < replicas.size(); ++r)
        EXPECT_TRUE(torch::equal(all.narrow(0, r * mine.numel(), mine.numel()), mine))
            << name << " replica " << r << " of group size " << g;
    }
  }
}

// One step from the same weights and batch: the gradient norm under hybrid
// sharding is the norm of the whole model's gradient (one replica's shards),
// the same as under full sharding; summed over every rank it would be
// sqrt(replicas) times larger and clip too hard.
TEST(HybridSharding, GradientNormCoversTheModelOnce) {
  const config::Config config = make_config({8, 1, false, false, true});
  const auto& t = config.training;
  const auto norm_of_one_step = [&](Layout& layout) {
    ShardedLlama model(config.model, t.lora, false, layout.unit_comms(), {}, torch::kCPU, kSeqLen);
    model.initialize(model::InitialWeights(config.model, t.lora, 3));
    ShardedState state(model);
    const optim::AdamW adamw({t.beta1, t.beta2, t.eps, t.weight_decay});
    const int rank = layout.world->rank(), size = layout.world->size();
    const std::int64_t per_rank = t.global_batch_size / size;
    return run_training_step(
               model, state, adamw, {1, per_rank, 0.01, 1.0, nullptr},
               [&](std::int64_t micro) {
                 return batch_of({rank * per_rank + micro}, config.model.vocab_size, 1, 3);
               },
               layout.step_comms())
        .grad_norm;
  };
  Layout full(0);
  const double expected = norm_of_one_step(full);
  EXPECT_GT(expected, 0);
  for (const int g : group_sizes(world_size())) {
    Layout layout(g);
    EXPECT_NEAR(norm_of_one_step(layout), expected, 1e-6 * expected) << "group size " << g;
  }
}

// Per micro-step, within the shard group of G ranks:
//   (G-1)/G x (2 Psi_all b + Psi_trainable x 4)   (all-gathers, reduce-scatters)
// and across the R = N/G replicas, one all-reduce of each gradient shard:
//   2 (R-1)/R x Psi_trainable / G x 4.
TEST(HybridSharding, TrafficMatchesTheTwoLevelFormula) {
  for (const int g : group_sizes(world_size())) {
    Layout layout(g);
    for (const bool tied : {false, true}) {
      const config::Config config = make_config({8, 1, tied, false, true});
      ShardedLlama model(config.model, config.training.lora, false, layout.unit_comms(), {},
                         torch::kCPU, kSeqLen);
      model.initialize(model::InitialWeights(config.model, config.training.lora, 1));
      layout.groups.shard->reset_stats();
      layout.groups.replicate->reset_stats();
      const auto batch = batch_of({layout.world->rank()}, config.model.vocab_size, 1, 1);
      model.loss(batch.inputs, batch.targets, batch.target_mask, nullptr).backward();
      double psi_all = 0, psi_trainable = 0;
      for (auto& unit : model.units()) {
        psi_all += static_cast<double>(unit->layout().padded(true) + unit->layout().padded(false));
        psi_trainable += static_cast<double>(unit->layout().padded(true));
      }
      if (tied) {  // gathered again by the head, and reduced there too
        psi_all += static_cast<double>(model.units()[0]->layout().padded(true));
        psi_trainable += static_cast<double>(model.units()[0]->layout().padded(true));
      }
      const double group = g, replicas = layout.shape.replicas();
      const auto shard = layout.groups.shard->stats();
      EXPECT_DOUBLE_EQ(shard[comm::CollectiveKind::kAllGather].bytes +
                           shard[comm::CollectiveKind::kReduceScatter].bytes,
                       (group - 1) / group * (2 * psi_all * 4 + psi_trainable * 4));
      const auto across = layout.groups.replicate->stats();
      EXPECT_DOUBLE_EQ(across.total_bytes(),
                       2 * (replicas - 1) / replicas * psi_trainable / group * 4)
          << "group size " << g;
      EXPECT_EQ(across[comm::CollectiveKind::kAllReduce].calls,
                replicas > 1 ? model.units().size() + (tied ? 1 : 0) : 0);
    }
  }
}

}  // namespace
}  // namespace nss::train
