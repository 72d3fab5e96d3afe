// layout.parallel's step-time model against hand computations (collectives,
// group spans, the units' bytes and FLOPs, the step's bounds, calibration),
// and the check on hand-made multi-node rank facts: one node, full sharding
// far from the best over 64 nodes, groups that straddle nodes, groups that
// span whole nodes for nothing, the memory filter, the synthetic step's time.
// tests/preflight/test_layout_advice.py checks the same model against
// scripts/bench/scale_model.py figure by figure.
#include "preflight/parallel_layout_advice.h"

#include <gtest/gtest.h>

#include "config/load.h"
#include "preflight/layout_checks.h"
#include "preflight/parallel_layout_check.h"

namespace nss::preflight {
namespace {

constexpr double kAlphaIntra = 3.4e-6, kAlphaInter = 14e-6, kAlphaBase = 8.4e-6;

LinkModel round_links() {
  LinkModel links;
  links.ranks_per_node = 8;
  links.intra_node_bytes_per_s = 100e9;
  links.inter_node_bytes_per_s = 10e9;
  return links;
}

TEST(CollectiveCosts, AllGatherWithinAndAcrossNodes) {
  const LinkModel links = round_links();
  // 7 ring steps within the node + the base + S (n-1)/n / busbw.
  EXPECT_DOUBLE_EQ(all_gather_seconds(links, 1e9, 8, {1, 8}),
                   kAlphaBase + 7 * kAlphaIntra + 1e9 * 7 / 8 / 100e9);
  EXPECT_DOUBLE_EQ(reduce_scatter_seconds(links, 1e9, 8, {1, 8}),
                   all_gather_seconds(links, 1e9, 8, {1, 8}));
  // 32 ranks on 4 nodes: 3 of the 31 steps between nodes; rails: min(100, 8 x 10) GB/s.
  EXPECT_DOUBLE_EQ(all_gather_seconds(links, 1e9, 32, {4, 8}),
                   kAlphaBase + 28 * kAlphaIntra + 3 * kAlphaInter + 1e9 * 31 / 32 / 80e9);
  LinkModel single = links;
  single.single_nic = true;
  EXPECT_DOUBLE_EQ(all_gather_seconds(single, 1e9, 32, {4, 8}),
                   kAlphaBase + 28 * kAlphaIntra + 3 * kAlphaInter + 1e9 * 31 / 32 / 10e9);
  EXPECT_EQ(all_gather_seconds(links, 1e9, 1, {1, 1}), 0.0);
}

TEST(CollectiveCosts, AllReduceTakesRingOrTree) {
  const LinkModel links = round_links();
  // Within a node: the tree's 2 x log2(8) = 6 levels beat the ring's 14 steps.
  EXPECT_DOUBLE_EQ(all_reduce_seconds(links, 1e9, 8, {1, 8}),
                   kAlphaBase + 2.0 * 7 / 8 * 1e9 / 100e9 + 6 * kAlphaIntra);
  // 16 ranks, one per node (a replica group): one NIC each, 2 x 4 tree levels.
  EXPECT_DOUBLE_EQ(all_reduce_seconds(links, 1e9, 16, {16, 1}),
                   kAlphaBase + 2.0 * 15 / 16 * 1e9 / 10e9 + 8 * kAlphaInter);
  EXPECT_EQ(all_reduce_seconds(links, 1e9, 1, {1, 1}), 0.0);
}

TEST(CollectiveCosts, GroupSpans) {
  const LinkModel links = round_links();
  const auto span = [&](int n, int stride) {
    const GroupSpan s = group_span(n, stride, links);
    return std::make_pair(s.nodes, s.per_node);
  };
  EXPECT_EQ(span(8, 1), std::make_pair(1, 8));    // a node
  EXPECT_EQ(span(64, 1), std::make_pair(8, 8));   // G = 64: 8 nodes
  EXPECT_EQ(span(16, 8), std::make_pair(16, 1));  // replicas of G = 8: one per node
  EXPECT_EQ(span(4, 4), std::make_pair(2, 2));    // replicas of G = 4 at N = 16
  EXPECT_EQ(span(1, 1), std::make_pair(1, 1));
}

TEST(CollectiveCosts, ConfiguredLinksConvertUnits) {
  config::PreflightConfig preflight;  // 450 GB/s, 400 Gb/s
  const LinkModel links = configured_links(preflight, 4);
  EXPECT_EQ(links.ranks_per_node, 4);
  EXPECT_DOUBLE_EQ(links.intra_node_bytes_per_s, 450e9);
  EXPECT_DOUBLE_EQ(links.inter_node_bytes_per_s, 50e9);
  EXPECT_FALSE(links.single_nic);
}

// The tiny preset: hidden 64, I 176, 2 blocks, 4 heads of 16, 2 KV heads, vocab 258.
config::Config tiny(const std::string& model = "{}", const std::string& lora = "{}") {
  return config::parse_config_text("model: " + model +
                                       "\ndata: {seq_len: 128}\ntraining: {micro_batch_size: 2, "
                                       "global_batch_size: 16, lora: " +
                                       lora + "}\n",
                                   "test");
}

constexpr double kEmbedding = 258 * 64;
constexpr double kBlock = 2 * 64 * 4 * 16 + 2 * 64 * 2 * 16 + 3 * 64 * 176 + 2 * 64;  // 46208
constexpr double kHead = 64 + 258 * 64;
constexpr double kAttention = 4.0 * 128 * 4 * 16;  // per token and block

TEST(UnitCosts, FollowDocsArchitectureBytes) {
  const config::Config config = tiny();
  const auto units = unit_costs(config, DeviceKind::kCpu, 4);  // fp32 gathers
  ASSERT_EQ(units.size(), 4u);
  EXPECT_EQ(units[0].gathered_bytes, kEmbedding * 4);
  EXPECT_EQ(units[0].reduced_bytes, kEmbedding * 4);
  EXPECT_EQ(units[0].replica_reduced_bytes, kEmbedding);  // a quarter, 4 bytes each
  EXPECT_EQ(units[0].shard_parameters, kEmbedding / 4);
  EXPECT_EQ(units[0].flops_weight, 0.0);  // a lookup
  EXPECT_EQ(units[1].gathered_bytes, kBlock * 4);
  EXPECT_EQ(units[1].flops_weight, 2 * (kBlock - 2 * 64) + kAttention);
  EXPECT_EQ(units[3].gathered_bytes, kHead * 4);
  EXPECT_EQ(units[3].flops_weight, 2 * kEmbedding);
  // bf16 on GPU; 3 ranks pad the block to 46209 elements.
  const auto padded = unit_costs(config, DeviceKind::kCuda, 3);
  EXPECT_EQ(padded[1].gathered_bytes, 46209 * 2);
  EXPECT_EQ(padded[1].reduced_bytes, 46209 * 4);
  EXPECT_EQ(padded[1].shard_parameters, 15403);
}

TEST(UnitCosts, TiedHeadGathersAndReducesTheEmbeddingButOwnsOnlyItsNorm) {
  const auto units = unit_costs(tiny("{tie_word_embeddings: true}"), DeviceKind::kCpu, 4);
  EXPECT_EQ(units[3].gathered_bytes, (64 + kEmbedding) * 4);
  EXPECT_EQ(units[3].reduced_bytes, (64 + kEmbedding) * 4);
  EXPECT_EQ(units[3].shard_parameters, 16);
  EXPECT_EQ(units[3].flops_weight, 2 * kEmbedding);
}

TEST(UnitCosts, FrozenLoraEmbeddingIsGatheredOnce) {
  const auto units = unit_costs(tiny("{}", "{enabled: true, rank: 4}"), DeviceKind::kCpu, 4);
  EXPECT_FALSE(units[0].backward);
  EXPECT_EQ(units[0].reduced_bytes, 0.0);
  EXPECT_EQ(units[0].gathered_bytes, kEmbedding * 4);
  EXPECT_TRUE(units[1].backward);
  EXPECT_GT(units[1].reduced_bytes, 0.0);                      // the adapters
  EXPECT_GT(units[1].gathered_bytes, units[1].reduced_bytes);  // and the frozen base
}

TEST(StepTime, OneRankIsComputeAndOptimizer) {
  const config::Config config = tiny();
  const StepTimeModel model(config, DeviceKind::kCpu, configured_workload(config, 1),
                            configured_links(config.preflight, 1));
  const LayoutPrediction p = model.predict(1, 1, 0.5);
  const double optimizer = (kEmbedding + 2 * kBlock + kHead) * 2e-11;
  EXPECT_DOUBLE_EQ(p.step_s, 0.5 + optimizer);
  EXPECT_DOUBLE_EQ(p.serial_s, p.step_s);
  EXPECT_EQ(p.comm_s, 0.0);
  EXPECT_DOUBLE_EQ(p.state_bytes_per_rank, 16 * (kEmbedding + 2 * kBlock + kHead));
  EXPECT_DOUBLE_EQ(p.efficiency, 1.0);
  EXPECT_DOUBLE_EQ(p.tokens_per_s_per_rank, 128 * 2 * 8 / p.step_s);  // 8 micro-steps
}

TEST(StepTime, WithoutComputeEveryCollectiveRunsInSequence) {
  const config::Config config = tiny();
  const LinkModel links = configured_links(config.preflight, 4);
  const StepTimeModel model(config, DeviceKind::kCpu, configured_workload(config, 4), links);
  const LayoutPrediction p = model.step_time(4, 4, 0.0);
  // Per micro-step (2 of them at 4 ranks) every unit is gathered twice and
  // reduce-scattered once, all within the node; then 4 small all-reduces.
  const auto collective = [](double elements) {
    return kAlphaBase + 3 * kAlphaIntra + elements * 4 * 3 / 4 / 450e9;
  };
  double per_micro = 0;
  for (const double elements : {kEmbedding, kBlock, kBlock, kHead})
    per_micro += 3 * collective(elements);
  const double small = 4 * (kAlphaBase + 8 * 2.0 * 3 / 4 / 450e9 + 4 * kAlphaIntra);
  const double optimizer = (kEmbedding + 2 * kBlock + kHead) / 4 * 2e-11;
  EXPECT_NEAR(p.serial_s, 2 * per_micro + small + optimizer, 1e-15);
  EXPECT_NEAR(p.overlapped_s, p.serial_s, 1e-15);
  EXPECT_NEAR(p.comm_s, 2 * per_micro + small, 1e-15);
}

TEST(StepTime, ComputeHidesTheCollectivesAndCalibrationInvertsTheModel) {
  const config::Config config = tiny();
  const StepTimeModel model(config, DeviceKind::kCpu, configured_workload(config, 16),
                            configured_links(config.preflight, 8));
  const LayoutPrediction p = model.predict(16, 8, 1.0);
  EXPECT_LT(p.overlapped_s, p.serial_s);
  EXPECT_LT(p.exposed_comm_s, 0.001);
  EXPECT_EQ(p.replica_span.nodes, 2);  // two replicas of G=8, one per node
  EXPECT_GT(p.all_reduce_s, 0.0);
  const double compute = model.calibrate(16, 8, p.step_s);
  EXPECT_NEAR(compute, 1.0, 1e-12);
  EXPECT_THROW(model.calibrate(16, 8, 1e-7), UsageError);  // shorter than the collectives
  EXPECT_THROW(model.step_time(16, 3, 1.0), UsageError);
}

TEST(Advice, FullShardingOverSixtyFourNodesAtShortStepsIsFar) {
  // docs/performance.md: Llama-3.1-8B, 1,024 tokens per GPU and step at
  // torchtitan's rate, 512 GPUs: full sharding is +129% against HSDP G=16.
  const config::Config config = config::parse_config_text(
      "model: {preset: llama-3.1-8b}\ndata: {seq_len: 1024}\n"
      "training: {dtype: bf16, micro_batch_size: 1, global_batch_size: 512}\n",
      "test");
  const StepTimeModel model(config, DeviceKind::kCuda, configured_workload(config, 512),
                            configured_links(config.preflight, 8));
  const double compute = model.calibrate_on_torchtitan();
  const std::vector<Layout> groups = candidate_layouts(model, 512, advice_groups(8), {1}, nullptr);
  const LayoutAdvice advice = advise_layout(model, 512, 0, compute, groups);
  EXPECT_EQ(advice.mine.shard_group, 512);
  EXPECT_EQ(advice.best.shard_group, 16);
  EXPECT_TRUE(advice.far);
  EXPECT_NEAR(advice.slower, 1.285, 0.001);
  EXPECT_EQ(advice.candidates.size(), 5u);
  // Left out for memory, G=16 cannot be the best.
  const LayoutAdvice fitting =
      advise_layout(model, 512, 0, compute, groups, [](Layout l) { return l.shard_group >= 32; });
  EXPECT_EQ(fitting.best.shard_group, 32);
  EXPECT_EQ(fitting.left_out, (std::vector<Layout>{{8, 1}, {16, 1}}));
  EXPECT_EQ(layout_name(512, 512), "full sharding (G=512)");
  EXPECT_EQ(layout_name(512, 16), "HSDP G=16");
  EXPECT_EQ(layout_name(512, 256, 2), "full sharding (G=256), T=2");
  EXPECT_EQ(layout_name(512, 4, 2), "HSDP G=4, T=2");
}

// --- the check -------------------------------------------------------------

RankFacts rank_on(int rank, const std::string& host, int local_rank, int local_size) {
  RankFacts facts;
  facts.rank = rank;
  facts.host = host;
  facts.local_rank = local_rank;
  facts.local_size = local_size;
  return facts;  // memory unknown: no memory budget, no candidate left out
}

// `nodes` nodes of `per_node` ranks, consecutive ranks on one node.
std::vector<RankFacts> cluster(int nodes, int per_node) {
  std::vector<RankFacts> ranks;
  for (int n = 0; n < nodes; ++n)
    for (int l = 0; l < per_node; ++l)
      ranks.push_back(rank_on(n * per_node + l, "node" + std::to_string(n), l, per_node));
  return ranks;
}

::testing::AssertionResult StartsWith(const std::string& text, const std::string& prefix) {
  if (text.rfind(prefix, 0) == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "\"" << text << "\"\ndoes not start with\n\"" << prefix << "\"";
}

class ParallelLayoutCheck : public ::testing::Test {
 protected:
  void use(const std::string& yaml) { config = config::parse_config_text(yaml, "test"); }
  Check run(std::vector<RankFacts> ranks, DeviceKind device = DeviceKind::kCuda) {
    const int size = static_cast<int>(ranks.size());
    const PreflightContext context{config, size, device, std::move(ranks), 0, {}};
    return check_parallel_layout(context, report);
  }
  config::Config config;
  PreflightReport report{"cuda"};
};

TEST_F(ParallelLayoutCheck, OneNodePassesWithANote) {
  use("training: {micro_batch_size: 2, global_batch_size: 8}\n");
  const Check check = run(cluster(1, 4), DeviceKind::kCpu);
  EXPECT_EQ(check.status, CheckStatus::kPass);
  EXPECT_EQ(check.message,
            "full sharding (G=4) on one node (host node0, 4 ranks): every collective stays within "
            "it; the layout advice is for jobs on several nodes or with tensor parallelism");
  ASSERT_TRUE(report.parallel);
  EXPECT_EQ(report.parallel->nodes, 1);
  EXPECT_EQ(report.parallel->shard_group_size, 4);
  EXPECT_FALSE(report.parallel->step_s);
}

const char* kEightB =
    "model: {preset: llama-3.1-8b}\ndata: {seq_len: 1024}\n"
    "training: {dtype: bf16, micro_batch_size: 1, global_batch_size: 512}\n";

TEST_F(ParallelLayoutCheck, FullShardingOverSixtyFourNodesWarnsWithTheBestGroup) {
  use(kEightB);
  const Check check = run(cluster(64, 8));
  EXPECT_EQ(check.status, CheckStatus::kWarn);
  EXPECT_EQ(check.code, ExitCode::kUsage);
  EXPECT_NE(check.message.find("full sharding (G=512) on 64 nodes of 8 ranks: predicted step "
                               "0.411 s, efficiency 0.43 against one node, 129% slower than HSDP "
                               "G=16 (0.180 s, efficiency 0.99)"),
            std::string::npos)
      << check.message;
  EXPECT_NE(check.message.find("torchtitan's 5,762 tokens/s/GPU"), std::string::npos);
  EXPECT_TRUE(StartsWith(check.remediation, "set parallel.shard_group_size=16: predicted 0.180 s"));
  EXPECT_NEAR(*check.predicted, 0.4114, 1e-4);
  EXPECT_NEAR(*check.threshold, 1.2 * 0.18004, 1e-4);
  EXPECT_FALSE(check.measured);
  const ParallelSummary& s = *report.parallel;
  EXPECT_EQ(s.nodes, 64);
  EXPECT_EQ(s.ranks_per_node, 8);
  EXPECT_EQ(s.shard_group_nodes, 64);
  EXPECT_EQ(s.compute_source, "torchtitan_rate");
  EXPECT_EQ(*s.best_shard_group_size, 16);
  EXPECT_EQ(*s.best_tensor_parallel_size, 1);
  EXPECT_NEAR(*s.slower, 1.285, 0.001);
  // Full sharding and G = 8 .. 64 ranks at T = 1, 2, 4, 8 (ranks of one
  // tensor rank: G = 512 / T .. 8 / T).
  ASSERT_EQ(s.layouts.size(), 20u);
  EXPECT_EQ(s.layouts.front().shard_group_size, 8);
  EXPECT_EQ(s.layouts[4].shard_group_size, 512);
  EXPECT_EQ(s.layouts[4].tensor_s, 0.0);
  EXPECT_EQ(s.layouts[5].shard_group_size, 4);
  EXPECT_EQ(s.layouts[5].tensor_parallel_size, 2);
  EXPECT_GT(s.layouts[5].tensor_s, 0.0);
  EXPECT_EQ(s.layouts.back().shard_group_size, 64);
  EXPECT_EQ(s.layouts.back().tensor_parallel_size, 8);
}

TEST_F(ParallelLayoutCheck, TheBestGroupPasses) {
  use(std::string(kEightB) + "parallel: {shard_group_size: 16}\n");
  const Check check = run(cluster(64, 8));
  EXPECT_EQ(check.status, CheckStatus::kPass) << check.message;
  EXPECT_NE(check.message.find("HSDP G=16 on 64 nodes of 8 ranks (32 replica groups): predicted "
                               "step 0.180 s, efficiency 0.99 against one node, the best "
                               "predicted layout; each shard group spans 2 nodes (predicted "
                               "faster than HSDP G=8's 0.237 s)"),
            std::string::npos)
      << check.message;
}

TEST_F(ParallelLayoutCheck, GroupsThatStraddleNodesWarn) {
  // 4 nodes of 6 ranks, G = 4: ranks 4-7 are on node0 and node1.
  use("training: {micro_batch_size: 1, global_batch_size: 24}\nparallel: {shard_group_size: 4}\n");
  Check check = run(cluster(4, 6));
  EXPECT_EQ(check.status, CheckStatus::kWarn);
  EXPECT_NE(check.message.find("shard groups straddle nodes (ranks 4-7 on hosts node0, node1): "
                               "their all-gathers and reduce-scatters leave the node"),
            std::string::npos)
      << check.message;
  EXPECT_EQ(check.remediation,
            "set parallel.shard_group_size=6 (the ranks per node) or a divisor or multiple of it");
  EXPECT_FALSE(report.parallel->whole_nodes);
  // Ranks dealt round-robin over 2 nodes: G = 4 divides the 4 per node, but
  // every group has members on both; the fix is the placement.
  use("training: {micro_batch_size: 1, global_batch_size: 8}\nparallel: {shard_group_size: 4}\n");
  std::vector<RankFacts> dealt;
  for (int r = 0; r < 8; ++r) dealt.push_back(rank_on(r, "node" + std::to_string(r % 2), r / 2, 4));
  check = run(dealt);
  EXPECT_EQ(check.status, CheckStatus::kWarn);
  EXPECT_NE(check.remediation.find("start consecutive ranks on the same node"), std::string::npos)
      << check.remediation;
}

// Tensor groups (consecutive ranks) inside nodes pass; one that spans two
// hosts is a usage error naming the group, the hosts and the ranks per node.
TEST_F(ParallelLayoutCheck, TensorGroupsMustStayInsideANode) {
  use("training: {micro_batch_size: 1, global_batch_size: 8}\n"
      "parallel: {tensor_parallel_size: 4}\n");
  Check check = run(cluster(2, 4));
  EXPECT_EQ(check.status, CheckStatus::kPass) << check.message;
  EXPECT_TRUE(StartsWith(check.message,
                         "full sharding (G=2), T=4 on 2 nodes of 4 ranks: predicted step "
                         "0.025 s, efficiency 0.99 against one node, within 15% of the "
                         "best, HSDP G=4, T=1 at 0.022 s"));
  std::vector<RankFacts> dealt;  // round-robin over 2 nodes
  for (int r = 0; r < 8; ++r) dealt.push_back(rank_on(r, "node" + std::to_string(r % 2), r / 2, 4));
  check = run(dealt);
  EXPECT_EQ(check.status, CheckStatus::kFail);
  EXPECT_EQ(check.code, ExitCode::kUsage);
  EXPECT_EQ(check.message,
            "parallel.tensor_parallel_size 4: tensor group 0 (ranks 0-3) spans hosts node0 and "
            "node1");
  EXPECT_NE(check.remediation.find("divides the ranks per node (4 here)"), std::string::npos);
  // Six ranks per node: groups of 4 straddle the nodes.
  check = run(cluster(2, 6));
  EXPECT_EQ(check.status, CheckStatus::kFail);
  EXPECT_NE(check.message.find("tensor group 1 (ranks 4-7) spans hosts node0 and node1"),
            std::string::npos)
      << check.message;
}

// On one node the advice runs for a job with tensor parallelism: T = 8
// puts every layer's all-gathers and reduce-scatters on the compute stream,
// while full sharding at T = 1 hides its collectives behind compute.
TEST_F(ParallelLayoutCheck, TensorParallelismWithoutNeedOnOneNodeWarns) {
  use("model: {preset: llama-3.1-8b}\ndata: {seq_len: 8192}\n"
      "training: {dtype: bf16, micro_batch_size: 1, global_batch_size: 8}\n"
      "parallel: {tensor_parallel_size: 8}\n");
  const Check check = run(cluster(1, 8));
  EXPECT_EQ(check.status, CheckStatus::kWarn) << check.message;
  EXPECT_TRUE(StartsWith(check.message,
                         "full sharding (G=1), T=8 on 1 node of 8 ranks: predicted step "
                         "1.958 s, efficiency 1.00 against one node, 38% slower than full "
                         "sharding (G=8), T=1 (1.422 s, efficiency 1.00)"));
  EXPECT_NE(check.message.find("0.545 s of tensor-parallel collectives on the compute stream "
                               "against 0.000 s"),
            std::string::npos)
      << check.message;
  EXPECT_TRUE(StartsWith(check.remediation,
                         "set parallel.shard_group_size=0 (full sharding) and "
                         "parallel.tensor_parallel_size=1: predicted 1.422 s per step"));
  EXPECT_EQ(report.parallel->tensor_parallel_size, 8);
  EXPECT_EQ(*report.parallel->best_tensor_parallel_size, 1);
}

TEST_F(ParallelLayoutCheck, TensorGroupsThatDoNotDivideEightAreCalibratedOnWholeGroups) {
  // torchtitan's 8 GPUs hold no whole group of 3: the calibration rounds up
  // to 9 (and the global batch leaves no T = 1 to calibrate at).
  use("model: {preset: tiny, num_attention_heads: 6, num_key_value_heads: 3, "
      "intermediate_size: 384}\n"
      "data: {seq_len: 96}\ntraining: {micro_batch_size: 2, global_batch_size: 2}\n"
      "parallel: {tensor_parallel_size: 3}\n");
  const Check check = run(cluster(1, 3));
  EXPECT_EQ(check.status, CheckStatus::kPass) << check.message;
  EXPECT_TRUE(StartsWith(check.message,
                         "full sharding (G=1), T=3 on 1 node of 3 ranks: "
                         "predicted step "))
      << check.message;
  ASSERT_TRUE(report.parallel->step_s);
  EXPECT_EQ(report.parallel->compute_source, "torchtitan_rate");
}

TEST_F(ParallelLayoutCheck, GroupsSpanningNodesForNothingWarn) {
  // torchtitan's long step (16,384 tokens per rank) on a slow network
  // (50 Gb/s per rank): G = 16 over 2 nodes is a little slower than G = 8
  // within one, and not far from the best (full sharding, which amortises
  // its latency over more ranks).
  use("model: {preset: llama-3.1-8b}\ndata: {seq_len: 8192}\n"
      "training: {dtype: bf16, micro_batch_size: 2, global_batch_size: 64}\n"
      "parallel: {shard_group_size: 16}\npreflight: {inter_node_bandwidth_gbps: 50}\n");
  const Check check = run(cluster(4, 8));
  EXPECT_EQ(check.status, CheckStatus::kWarn) << check.message;
  EXPECT_NE(check.message.find("each shard group spans 2 nodes, so its all-gathers leave the "
                               "node, and HSDP G=8 within a node is predicted no slower"),
            std::string::npos)
      << check.message;
  EXPECT_TRUE(StartsWith(check.remediation,
                         "set parallel.shard_group_size=8 (the ranks per node), or "
                         "parallel.shard_group_size=0 (full sharding), the best "
                         "predicted layout at 2.907 s; the prediction rests on the "
                         "link bandwidths"));
  EXPECT_NE(check.message.find("links 450 GB/s within a node, 50 Gb/s per rank between nodes"),
            std::string::npos);
}

TEST_F(ParallelLayoutCheck, UsesTheSyntheticStepsTime) {
  use(std::string(kEightB) + "parallel: {shard_group_size: 8}\n");
  // Two synthetic steps of two micro-steps each took 3 s: 1.5 s per step,
  // less AdamW on the shard of G = 8 (1,003,782,656 parameters x 2e-11 s),
  // and the job runs 512 / 32 = 16 micro-steps per step, 8 times as many.
  report.memory.measurements.push_back({1, std::uint64_t{1} << 30, 3.0});
  const Check check = run(cluster(4, 8));
  const double compute = 8 * (1.5 - 1003782656 * 2e-11);
  EXPECT_EQ(report.parallel->compute_source, "synthetic_step");
  EXPECT_NEAR(*report.parallel->compute_s, compute, 1e-12);
  EXPECT_NEAR(*check.measured, compute, 1e-12);
  EXPECT_NE(check.message.find("compute 11.8394 s per step (the synthetic step)"),
            std::string::npos)
      << check.message;
}

TEST_F(ParallelLayoutCheck, ALayoutThatDoesNotFitIsNotSuggested) {
  // Host memory known (CPU: 64 GiB per node of 8 ranks): the 8B model's state
  // at G = 8 or 16 does not fit a rank's 7.2 GiB budget.
  use("model: {preset: llama-3.1-8b}\ndata: {seq_len: 1024}\n"
      "training: {dtype: bf16, micro_batch_size: 1, global_batch_size: 512}\n");
  std::vector<RankFacts> ranks = cluster(64, 8);
  for (auto& r : ranks) r.memory.usable_bytes = std::uint64_t{64} << 30;
  const Check check = run(ranks, DeviceKind::kCpu);
  const ParallelSummary& s = *report.parallel;
  ASSERT_EQ(s.layouts.size(), 20u) << check.message;
  EXPECT_FALSE(s.layouts[0].fits_memory);  // G = 8
  EXPECT_FALSE(s.layouts[1].fits_memory);  // G = 16
  // G = 32 and 64 at T = 1 do not fit either (the head's [V, H] products);
  // at T = 2 a rank holds half the vocabulary: G = 16 fits and beats full
  // sharding, whose all-gathers span 64 nodes.
  EXPECT_FALSE(s.layouts[3].fits_memory);  // G = 64
  EXPECT_TRUE(s.layouts[4].fits_memory);   // full sharding
  EXPECT_EQ(*s.best_shard_group_size, 16) << check.message;
  EXPECT_EQ(*s.best_tensor_parallel_size, 2) << check.message;
  EXPECT_EQ(check.status, CheckStatus::kWarn) << check.message;
  EXPECT_TRUE(StartsWith(check.remediation,
                         "set parallel.shard_group_size=16 and "
                         "parallel.tensor_parallel_size=2: predicted 0.334 s per step"));
}

}  // namespace
}  // namespace nss::preflight
