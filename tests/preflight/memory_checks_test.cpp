// The memory checks without libtorch: what one rank can use, the extras
// outside the tensors, the budget verdict with the largest micro-batch that
// fits (from the measured line and the analytic model), and the data checks
// through lib/data (format, length, vocabulary, first batch under a deadline).
#include "preflight/memory_checks.h"

#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "config/derived.h"
#include "core/units.h"
#include "data/token_file_writer.h"
#include "layout/sharded_state_layout.h"
#include "model/unit_layouts.h"
#include "preflight/gpu_inventory.h"
#include "preflight/memory_model.h"
#include "preflight/token_data_checks.h"
#include "support/test_paths.h"

namespace nss::preflight {
namespace {

constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;

RankFacts rank_on(int rank, const std::string& host, std::uint64_t usable) {
  RankFacts facts;
  facts.rank = rank;
  facts.host = host;
  facts.memory.usable_bytes = usable;
  facts.memory.bound_by = "MemAvailable";
  return facts;
}

class MemoryChecksTest : public ::testing::Test {
 protected:
  MemoryChecksTest() {
    config.training.global_batch_size = 16;
    config.training.micro_batch_size = 4;
    config.data.seq_len = 64;
    config.data.num_workers = 1;
    config.data.prefetch_factor = 2;
  }
  PreflightContext context(std::vector<RankFacts> ranks, std::uint64_t baseline = 0) {
    return {config, static_cast<int>(ranks.size()), DeviceKind::kCpu, std::move(ranks), baseline,
            {}};
  }
  // Four layers of hidden 256 and one sequence per step: state large
  // enough against the activations for the what-if advice to matter.
  void use_four_layer_model() {
    config.model.hidden_size = 256;
    config.model.intermediate_size = 1024;
    config.model.num_hidden_layers = 4;
    config.model.head_dim = 64;
    config.training.global_batch_size = 1;
    config.training.micro_batch_size = 1;
  }
  // A context of `world` ranks on `device` whose facts do not matter.
  PreflightContext context_of(int world, DeviceKind device, std::uint64_t baseline) {
    return {config, world, device, {}, baseline, {}};
  }
  config::Config config;
};

TEST_F(MemoryChecksTest, CapacityIsTheTightestNodeDividedByItsRanks) {
  // node0: 2 ranks, 1000 MiB; node1: 2 ranks, one of them sees only 600 MiB.
  const auto ranks =
      std::vector<RankFacts>{rank_on(0, "n0", 1000 * kMiB), rank_on(1, "n0", 1000 * kMiB),
                             rank_on(2, "n1", 1000 * kMiB), rank_on(3, "n1", 600 * kMiB)};
  const MemoryCapacity capacity = memory_capacity(context(ranks));
  ASSERT_TRUE(capacity.bytes);
  EXPECT_EQ(*capacity.bytes, 300 * kMiB);
  EXPECT_NE(capacity.description.find("host n1"), std::string::npos) << capacity.description;

  auto unknown = ranks;
  unknown[2].memory.usable_bytes.reset();
  EXPECT_FALSE(memory_capacity(context(unknown)).bytes);
}

TEST_F(MemoryChecksTest, ExtrasAreTheBaselineTheQueueAndTheCheckpointStaging) {
  auto extras = memory_extras(context_of(2, DeviceKind::kCpu, 100 * kMiB), 4);
  ASSERT_EQ(extras.size(), 3u);
  EXPECT_EQ(extras[0].name, "fixed_overhead");
  EXPECT_EQ(extras[0].bytes, 100 * kMiB);
  EXPECT_EQ(extras[1].name, "dataloader_queue");
  EXPECT_EQ(extras[1].bytes, 1u * 2 * 4 * ((65 + 1) * 8 + 64) * 2);  // + the target mask
  EXPECT_EQ(extras[2].bytes, 0u);  // synchronous checkpoints stage nothing

  config.checkpoint.async = true;  // masters and both moments of this rank's shards
  std::uint64_t trainable_shards = 0;
  for (const auto& unit : model::unit_layouts(config, 2)) trainable_shards += unit.shard_size(true);
  extras = memory_extras(context_of(2, DeviceKind::kCpu, 100 * kMiB), 4);
  EXPECT_EQ(extras[2].name, "async_checkpoint_staging");
  EXPECT_EQ(extras[2].bytes, 3 * 4 * trainable_shards);

  extras = memory_extras(context_of(2, DeviceKind::kCuda, 100 * kMiB), 4);
  ASSERT_EQ(extras.size(), 2u);
  EXPECT_EQ(extras[0].bytes, kCudaContextBytes);
  EXPECT_EQ(extras[1].name, "cublas_workspace");
  EXPECT_EQ(extras[1].bytes, kCublasWorkspaceBytes);
}

TEST_F(MemoryChecksTest, MicroBatchChoicesDivideThePerRankBatch) {
  EXPECT_EQ(config::micro_batch_choices(config, 2), (std::vector<std::int64_t>{1, 2, 4, 8}));
  EXPECT_EQ(config::micro_batch_choices(config, 3), std::vector<std::int64_t>{});
}

TEST_F(MemoryChecksTest, ModelComponentsSumToThePredictedPeak) {
  const auto ranks = std::vector<RankFacts>{rank_on(0, "n0", 8192 * kMiB)};
  PreflightReport report("cpu");
  const Check check = check_memory_model(context(ranks, 50 * kMiB), report);
  EXPECT_EQ(check.status, CheckStatus::kPass) << check.message;
  std::uint64_t sum = 0;
  for (const auto& component : report.memory.components) sum += component.bytes;
  EXPECT_EQ(sum, *report.memory.predicted_peak_bytes);
  EXPECT_EQ(*report.memory.budget_bytes, static_cast<std::uint64_t>(0.9 * 8192 * kMiB));
  EXPECT_EQ(*report.memory.fixed_overhead_bytes, 50 * kMiB);
  EXPECT_FALSE(report.memory.peak_phase.empty());
  // More tokens per micro-batch never need less memory.
  const auto small = predict_step_memory(config, 1, DeviceKind::kCpu, 1).peak_bytes;
  const auto large = predict_step_memory(config, 1, DeviceKind::kCpu, 8).peak_bytes;
  EXPECT_LT(small, large);
}

// The families' extra norms keep their graphs: without recompute every
// block's graph is held at the peak, so Qwen3's per-head q/k norms and
// Gemma 3's two sandwich norms add at least their kept fp32 inputs per layer.
TEST_F(MemoryChecksTest, FamilyNormsAddTheirGraphs) {
  config.training.activation_checkpointing = config::Recompute::kNone;
  const auto peak = [&](const std::string& family) {
    config.model.family = family;
    return predict_step_memory(config, 1, DeviceKind::kCpu, 4).peak_bytes;
  };
  const auto& m = config.model;
  const auto tokens = static_cast<std::uint64_t>(4 * config.data.seq_len);
  const auto layers = static_cast<std::uint64_t>(m.num_hidden_layers);
  const auto head_dim = static_cast<std::uint64_t>(m.head_dim);
  const std::uint64_t q = tokens * static_cast<std::uint64_t>(m.num_attention_heads) * head_dim * 4;
  const std::uint64_t k = tokens * static_cast<std::uint64_t>(m.num_key_value_heads) * head_dim * 4;
  const std::uint64_t hidden = tokens * static_cast<std::uint64_t>(m.hidden_size) * 4;
  const std::uint64_t llama = peak("llama"), qwen3 = peak("qwen3"), gemma3 = peak("gemma3");
  EXPECT_GE(qwen3, llama + layers * (q + k));
  EXPECT_GE(gemma3, qwen3 + layers * 2 * hidden);
}

// Packed rows on the CPU cost their documents' attention, one row at a time:
// even one document filling each row (the default) holds less than the
// batch-wide scores of windows, and short documents less still; on a GPU the
// mask computes every score, whatever the documents.
TEST_F(MemoryChecksTest, PackedRowsCostTheirDocuments) {
  config.data.seq_len = 512;
  const auto windows = predict_step_memory(config, 1, DeviceKind::kCpu, 4).peak_bytes;
  config.data.packing = config::Packing::kDocuments;
  const auto filled = predict_step_memory(config, 1, DeviceKind::kCpu, 4).peak_bytes;
  const auto short_documents =
      predict_step_memory(config, 1, DeviceKind::kCpu, 4, {100, 100, 100, 100, 100}).peak_bytes;
  EXPECT_LT(filled, windows);
  EXPECT_LT(short_documents, filled);
  EXPECT_EQ(predict_step_memory(config, 1, DeviceKind::kCuda, 4, {100, 100}).peak_bytes,
            predict_step_memory(config, 1, DeviceKind::kCuda, 4).peak_bytes);
}

// parallel.reshard_after_forward: false with recompute: every unit keeps its
// gathered parameters from its forward until its backward, so at a backward's
// peak the gathered parameters are those of the unit and every unit before it
// (the head's tied embedding again with it); the other components are those
// of resharding.
TEST_F(MemoryChecksTest, KeptParametersHoldEveryGatherUntilItsUnitsBackward) {
  for (const bool tied : {false, true}) {
    config.model.tie_word_embeddings = tied;
    config.parallel.reshard_after_forward = config::ReshardPolicy::kTrue;
    const StepMemory resharded = predict_step_memory(config, 2, DeviceKind::kCpu, 4);
    config.parallel.reshard_after_forward = config::ReshardPolicy::kFalse;
    const StepMemory kept = predict_step_memory(config, 2, DeviceKind::kCpu, 4);
    const auto part = [](const StepMemory& step, const std::string& name) {
      for (const auto& c : step.components)
        if (c.name == name) return c.bytes;
      return std::uint64_t{0};
    };
    const std::string prefix = "backward of unit ";
    ASSERT_EQ(kept.peak_phase.rfind(prefix, 0), 0u) << kept.peak_phase;
    const int peak_unit = std::stoi(kept.peak_phase.substr(prefix.size()));
    const auto layouts = model::unit_layouts(config, 2);
    const auto gathered = [&](std::size_t u) {
      return static_cast<std::uint64_t>(layouts[u].padded(true) + layouts[u].padded(false)) * 4;
    };
    std::uint64_t expected = 0;
    for (int u = 0; u <= peak_unit; ++u) expected += gathered(static_cast<std::size_t>(u));
    if (tied && peak_unit + 1 == static_cast<int>(layouts.size())) expected += gathered(0);
    EXPECT_EQ(part(kept, "gathered_parameters"), expected) << kept.peak_phase;
    EXPECT_GT(kept.peak_bytes, resharded.peak_bytes);
    EXPECT_EQ(kept.state_bytes, resharded.state_bytes);
    // Without recompute auto already keeps the graph: the policy changes nothing.
    config.training.activation_checkpointing = config::Recompute::kNone;
    const std::uint64_t no_recompute =
        predict_step_memory(config, 2, DeviceKind::kCpu, 4).peak_bytes;
    config.parallel.reshard_after_forward = config::ReshardPolicy::kAuto;
    EXPECT_EQ(predict_step_memory(config, 2, DeviceKind::kCpu, 4).peak_bytes, no_recompute);
    config.training.activation_checkpointing = config::Recompute::kFull;
  }
}

// The budget between the predictions at micro-batch 2 and 4: fails at 4 and
// names 2, from the measured line (the measurements are the predictions here).
TEST_F(MemoryChecksTest, BudgetFailsAndNamesTheLargestMicroBatchThatFits) {
  const std::uint64_t baseline = 10 * kMiB;
  const std::uint64_t at2 = predicted_total_bytes(context_of(1, DeviceKind::kCpu, baseline), 2);
  const std::uint64_t at4 = predicted_total_bytes(context_of(1, DeviceKind::kCpu, baseline), 4);
  const std::uint64_t budget = (at2 + at4) / 2;
  const auto ranks =
      std::vector<RankFacts>{rank_on(0, "n0", static_cast<std::uint64_t>(budget / 0.9) + 1)};
  PreflightReport report("cpu");
  check_memory_model(context(ranks, baseline), report);
  for (const std::int64_t m : {2, 4})
    report.memory.measurements.push_back(
        {m, predict_step_memory(config, 1, DeviceKind::kCpu, m).peak_bytes, 0.1});
  Check check = check_memory_budget(context(ranks, baseline), report);
  EXPECT_EQ(check.status, CheckStatus::kFail) << check.message;
  EXPECT_EQ(check.code, ExitCode::kResources);
  EXPECT_EQ(report.memory.max_micro_batch_size, 2);
  EXPECT_NE(check.remediation.find("set training.micro_batch_size=2"), std::string::npos)
      << check.remediation;
  EXPECT_NE(check.remediation.find("8 accumulation steps keep global_batch_size 16"),
            std::string::npos)
      << check.remediation;

  // An out-of-memory measurement at 4 is a fail even when the prediction fits.
  config.training.micro_batch_size = 2;
  report.memory.measurements[1].tensor_peak_bytes.reset();
  check = check_memory_budget(context(ranks, baseline), report);
  EXPECT_EQ(check.status, CheckStatus::kPass) << check.message;
  EXPECT_EQ(report.memory.max_micro_batch_size, 2);

  // Where the synthetic step ran, its measurement decides: a prediction above
  // the budget does not fail a step that was measured within it.
  report.memory.measurements[1].tensor_peak_bytes = 1;
  config.training.micro_batch_size = 4;
  check = check_memory_budget(context(ranks, baseline), report);
  EXPECT_EQ(check.status, CheckStatus::kPass) << check.message;
  EXPECT_EQ(report.memory.max_micro_batch_size, 4);
  config.training.micro_batch_size = 2;

  // Nothing fits: the remediation says so instead of naming a size.
  const auto poor = std::vector<RankFacts>{rank_on(0, "n0", 11 * kMiB)};
  PreflightReport tight("cpu");
  check_memory_model(context(poor, baseline), tight);
  check = check_memory_budget(context(poor, baseline), tight);
  EXPECT_EQ(check.status, CheckStatus::kFail);
  EXPECT_FALSE(tight.memory.max_micro_batch_size);
  EXPECT_NE(check.remediation.find("even training.micro_batch_size=1 does not fit"),
            std::string::npos)
      << check.remediation;
}

// A LoRA job that fits only with its base's projections in NF4: the model
// check reports the base's bytes per parameter, the budget's remediation
// names QLoRA first, and the QLoRA job passes in the same memory.
TEST_F(MemoryChecksTest, ALoraJobThatFitsOnlyWithAnNf4BaseIsToldSo) {
  use_four_layer_model();
  config.training.lora.enabled = true;
  const std::uint64_t baseline = 10 * kMiB;
  const std::uint64_t lora = predicted_total_bytes(context_of(1, DeviceKind::kCpu, baseline), 1);
  config.training.lora.quantize_base = config::QuantizeBase::kNf4;
  config.training.lora.double_quant = true;
  const std::uint64_t qlora = predicted_total_bytes(context_of(1, DeviceKind::kCpu, baseline), 1);
  ASSERT_LT(qlora, lora);
  const auto ranks = std::vector<RankFacts>{
      rank_on(0, "n0", static_cast<std::uint64_t>((qlora + lora) / 2 / 0.9) + 1)};

  PreflightReport quantized("cpu");
  const Check model = check_memory_model(context(ranks, baseline), quantized);
  EXPECT_NE(model.message.find("projections in NF4 with double quantisation"), std::string::npos)
      << model.message;
  ASSERT_TRUE(quantized.memory.base_bytes_per_parameter);
  // fp32 norms and embedding beside 4.127-bit projections.
  EXPECT_LT(*quantized.memory.base_bytes_per_parameter, 1.5);
  EXPECT_EQ(check_memory_budget(context(ranks, baseline), quantized).status, CheckStatus::kPass);

  config.training.lora.quantize_base = config::QuantizeBase::kNone;
  config.training.lora.double_quant = false;
  PreflightReport report("cpu");
  check_memory_model(context(ranks, baseline), report);
  EXPECT_EQ(*report.memory.base_bytes_per_parameter, 4.0);
  const Check check = check_memory_budget(context(ranks, baseline), report);
  EXPECT_EQ(check.status, CheckStatus::kFail) << check.message;
  EXPECT_NE(check.remediation.find("does not fit (predicted " + format_bytes(double(lora)) +
                                   " per rank): set training.lora.quantize_base: nf4 and "
                                   "training.lora.double_quant: true (QLoRA: predicted " +
                                   format_bytes(double(qlora)) + " per rank"),
            std::string::npos)
      << check.remediation;
  EXPECT_NE(check.remediation.find("instead of 4 bytes per base parameter"), std::string::npos)
      << check.remediation;

  // Full fine-tuning has no base to quantise: no such advice.
  config.training.lora.enabled = false;
  PreflightReport full("cpu");
  check_memory_model(context(ranks, baseline), full);
  EXPECT_FALSE(full.memory.base_bytes_per_parameter);
  EXPECT_EQ(check_memory_budget(context(ranks, baseline), full).remediation.find("nf4"),
            std::string::npos);
}

// A GPU job whose masters and moments do not fit beside the activations, but
// fit in pinned host memory: memory.budget fails and names the offload with
// its predicted figures; with offload on, the same GPU passes.
TEST_F(MemoryChecksTest, AGpuJobThatFitsOnlyWithOffloadIsToldSo) {
  use_four_layer_model();
  const std::uint64_t resident = predicted_total_bytes(context_of(1, DeviceKind::kCuda, 0), 1);
  config.parallel.offload_optimizer = true;
  const std::uint64_t offloaded = predicted_total_bytes(context_of(1, DeviceKind::kCuda, 0), 1);
  config.parallel.offload_optimizer = false;
  ASSERT_LT(offloaded, resident);
  RankFacts facts = rank_on(0, "n0", 64 * kMiB * 1024);
  GpuDevice device;
  device.pci_bus_id = "0000:1b:00.0";
  device.compute_major = 9;
  device.free_bytes = static_cast<std::uint64_t>((offloaded + resident) / 2 / 0.9);
  facts.gpus.devices = {device};
  const auto gpu_context = [&] {
    return PreflightContext{config, 1, DeviceKind::kCuda, {facts}, 0, {}};
  };
  PreflightReport report("cuda");
  check_memory_model(gpu_context(), report);
  const Check check = check_memory_budget(gpu_context(), report);
  EXPECT_EQ(check.status, CheckStatus::kFail) << check.message;
  EXPECT_NE(check.remediation.find("set parallel.offload_optimizer: true (fp32 masters and AdamW "
                                   "moments in pinned host memory"),
            std::string::npos)
      << check.remediation;
  EXPECT_NE(check.remediation.find("predicted " + format_bytes(double(offloaded)) +
                                   " per rank on the GPU"),
            std::string::npos)
      << check.remediation;

  config.parallel.offload_optimizer = true;
  PreflightReport with_offload("cuda");
  check_memory_model(gpu_context(), with_offload);
  EXPECT_EQ(check_memory_budget(gpu_context(), with_offload).status, CheckStatus::kPass);
}

// parallel.offload_optimizer on a GPU: the fp32 masters and both moments
// leave the device for pinned host memory (12 bytes per shard element); the
// device keeps a compute-dtype copy and the staging slots. On the CPU (which
// the trainer refuses) the model ignores the key.
TEST_F(MemoryChecksTest, OffloadMovesMastersAndMomentsToPinnedHostMemory) {
  config.model.hidden_size = 256;
  config.model.intermediate_size = 1024;
  config.model.num_hidden_layers = 4;
  config.model.head_dim = 64;
  const auto shard_elements =
      static_cast<std::uint64_t>(layout::ShardedStateLayout(model::unit_layouts(config, 2), 0)
                                     .bytes(layout::StateTensor::kMaster) /
                                 4);
  const StepMemory on_device = predict_step_memory(config, 2, DeviceKind::kCuda, 4);
  const StepMemory cpu = predict_step_memory(config, 2, DeviceKind::kCpu, 4);
  config.parallel.offload_optimizer = true;
  const StepMemory offloaded = predict_step_memory(config, 2, DeviceKind::kCuda, 4);
  EXPECT_EQ(on_device.pinned_host_bytes, 0u);
  EXPECT_EQ(offloaded.pinned_host_bytes, 12 * shard_elements);
  // bf16 on the GPU: 12 bytes leave, 2 bytes of compute copy (and the staging) come.
  EXPECT_LT(offloaded.state_bytes, on_device.state_bytes);
  EXPECT_LT(offloaded.peak_bytes, on_device.peak_bytes);
  const StepMemory cpu_offloaded = predict_step_memory(config, 2, DeviceKind::kCpu, 4);
  EXPECT_EQ(cpu_offloaded.peak_bytes, cpu.peak_bytes);
  EXPECT_EQ(cpu_offloaded.pinned_host_bytes, 0u);
}

TEST_F(MemoryChecksTest, PinnedHostCheckRunsOnlyForOffloadedGpuRuns) {
  const std::vector<RankFacts> roomy = {rank_on(0, "n0", 64ull << 30),
                                        rank_on(1, "n0", 64ull << 30)};
  const PreflightContext gpu{config, 2, DeviceKind::kCuda, roomy, 0, {}};
  EXPECT_FALSE(check_pinned_host_memory(gpu));  // offload off
  config.parallel.offload_optimizer = true;
  const PreflightContext cpu{config, 2, DeviceKind::kCpu, roomy, 0, {}};
  EXPECT_FALSE(check_pinned_host_memory(cpu));  // refused before, nothing to check
  const PreflightContext offloaded{config, 2, DeviceKind::kCuda, roomy, 0, {}};
  const auto pass = check_pinned_host_memory(offloaded);
  ASSERT_TRUE(pass);
  EXPECT_EQ(pass->id, "memory.pinned_host");
  EXPECT_EQ(pass->status, CheckStatus::kPass) << pass->message;

  std::vector<RankFacts> tight = {rank_on(0, "n0", 4096), rank_on(1, "n0", 4096)};
  const PreflightContext small{config, 2, DeviceKind::kCuda, tight, 0, {}};
  const auto fail = check_pinned_host_memory(small);
  ASSERT_TRUE(fail);
  EXPECT_EQ(fail->status, CheckStatus::kFail) << fail->message;
  EXPECT_NE(fail->message.find("host n0"), std::string::npos) << fail->message;

  std::vector<RankFacts> locked = roomy;
  locked[1].memlock.soft = 1024;
  locked[1].memlock.hard = 1024;
  const PreflightContext memlock{config, 2, DeviceKind::kCuda, locked, 0, {}};
  const auto warn = check_pinned_host_memory(memlock);
  ASSERT_TRUE(warn);
  EXPECT_EQ(warn->status, CheckStatus::kWarn) << warn->message;
  EXPECT_NE(warn->message.find("RLIMIT_MEMLOCK"), std::string::npos) << warn->message;
}

TEST_F(MemoryChecksTest, BudgetIsSkippedWithoutAKnownCapacity) {
  auto ranks = std::vector<RankFacts>{rank_on(0, "n0", kMiB)};
  ranks[0].memory.usable_bytes.reset();
  PreflightReport report("cpu");
  check_memory_model(context(ranks), report);
  const Check check = check_memory_budget(context(ranks), report);
  EXPECT_EQ(check.status, CheckStatus::kSkipped);
  EXPECT_NE(check.message.find("unknown"), std::string::npos) << check.message;
}

// --- data checks through lib/data -------------------------------------------

// A committed token file (TokenFileWriter writes the max_token_id attribute;
// the scan without it runs in the e2e test, whose file has no root attributes).
std::string token_file(const std::string& name, std::int64_t tokens, std::int64_t modulus) {
  const std::string path = nss::testing::scratch_dir("token_data_checks") + "/" + name;
  std::vector<std::int64_t> ids(static_cast<std::size_t>(tokens));
  for (std::int64_t i = 0; i < tokens; ++i) ids[static_cast<std::size_t>(i)] = i * 7 % modulus;
  data::TokenFileWriter writer(path, DType::kUInt16, tokens);
  writer.append(ids.data(), tokens);
  writer.commit({});
  return path;
}

class TokenDataChecksTest : public MemoryChecksTest {
 protected:
  std::vector<Check> validate(const std::string& path) {
    return token_dataset_validator(config)({"train", "data.path", path}, PathProbe{});
  }
};

TEST_F(TokenDataChecksTest, GoodDatasetPassesFormatAndVocabulary) {
  config.model.vocab_size = 300;
  const auto checks = validate(token_file("good.h5", 20000, 258));
  ASSERT_EQ(checks.size(), 2u);
  EXPECT_EQ(checks[0].id, "data.format");
  EXPECT_EQ(checks[0].status, CheckStatus::kPass) << checks[0].message;
  EXPECT_EQ(checks[1].id, "data.vocabulary");
  EXPECT_EQ(checks[1].status, CheckStatus::kPass) << checks[1].message;
  EXPECT_NE(checks[1].message.find("max_token_id attribute"), std::string::npos);
}

TEST_F(TokenDataChecksTest, TokensBeyondTheVocabularyFailWithExit4) {
  config.model.vocab_size = 200;
  const auto checks = validate(token_file("beyond.h5", 20000, 258));
  ASSERT_EQ(checks.size(), 2u);
  EXPECT_EQ(checks[0].status, CheckStatus::kPass) << checks[0].message;
  EXPECT_EQ(checks[1].status, CheckStatus::kFail) << checks[1].message;
  EXPECT_EQ(checks[1].code, ExitCode::kData);
  EXPECT_NE(checks[1].message.find("257"), std::string::npos) << checks[1].message;
  EXPECT_FALSE(checks[1].remediation.empty());
}

TEST_F(TokenDataChecksTest, TooShortOrMissingDatasetFailsWithExit4) {
  config.model.vocab_size = 300;
  // 16 windows of 65 tokens are needed; 500 tokens make 7.
  auto checks = validate(token_file("short.h5", 500, 258));
  EXPECT_EQ(checks[0].status, CheckStatus::kFail);
  EXPECT_EQ(checks[0].code, ExitCode::kData);
  EXPECT_NE(checks[0].message.find("too short"), std::string::npos) << checks[0].message;
  EXPECT_EQ(checks[1].status, CheckStatus::kSkipped);

  checks = validate(nss::testing::scratch_dir("token_data_checks") + "/missing.h5");
  EXPECT_EQ(checks[0].status, CheckStatus::kFail);
  EXPECT_EQ(checks[0].code, ExitCode::kData);
}

TEST_F(TokenDataChecksTest, FirstBatchArrivesThroughTheRealDataloader) {
  config.model.vocab_size = 300;
  config.data.path = token_file("first.h5", 20000, 258);
  const double seconds = fetch_first_batch(config, 2);
  EXPECT_GE(seconds, 0);
  PreflightReport report("cpu");
  report.add(Check::pass("data.format", ExitCode::kData, "ok"));
  const Check check = check_first_batch(context({rank_on(0, "n0", kMiB)}), report);
  EXPECT_EQ(check.status, CheckStatus::kPass) << check.message;
  EXPECT_TRUE(report.dataloader.first_batch_s);
}

// Four tensor ranks read one data-parallel rank's batches: a global batch of
// two micro-batches of 4 is one rank's share, not too small for 4 ranks.
TEST_F(TokenDataChecksTest, FirstBatchUnderTensorParallelismIsOneDataParallelRanks) {
  config.model.vocab_size = 300;
  config.data.path = token_file("first_tensor_parallel.h5", 20000, 258);
  config.parallel.tensor_parallel_size = 4;
  config.training.global_batch_size = 2 * config.training.micro_batch_size;
  EXPECT_GE(fetch_first_batch(config, 4), 0);
}

TEST_F(TokenDataChecksTest, FirstBatchThatDoesNotArriveFailsInTime) {
  config.preflight.first_batch_timeout_s = 0.5;
  PreflightReport report("cpu");
  report.add(Check::pass("data.format", ExitCode::kData, "ok"));
  const auto start = std::chrono::steady_clock::now();
  const Check check =
      check_first_batch(context({rank_on(0, "n0", kMiB)}), report, [](const config::Config&, int) {
        std::this_thread::sleep_for(std::chrono::seconds(3));
        return 3.0;
      });
  const double waited =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(check.status, CheckStatus::kFail);
  EXPECT_EQ(check.code, ExitCode::kData);
  EXPECT_NE(check.message.find("did not arrive within 0.5 s"), std::string::npos) << check.message;
  EXPECT_LT(waited, 2.0);

  PreflightReport no_format("cpu");
  EXPECT_EQ(check_first_batch(context({rank_on(0, "n0", kMiB)}), no_format).status,
            CheckStatus::kSkipped);
}

}  // namespace
}  // namespace nss::preflight
