// Every built-in check's pass, warn, fail and skipped paths on hand-made rank
// facts, and the order and plug-in points of build_report.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <unistd.h>

#include <gtest/gtest.h>

#include "config/derived.h"
#include "model/unit_layouts.h"
#include "preflight/checkpoint_checks.h"
#include "preflight/dataloader_memory.h"
#include "preflight/layout_checks.h"
#include "preflight/model_checks.h"
#include "preflight/preflight.h"
#include "support/test_paths.h"

namespace nss::preflight {
namespace {

constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;

RankFacts rank_on(int rank, const std::string& host, int local_rank, int local_size) {
  RankFacts facts;
  facts.rank = rank;
  facts.host = host;
  facts.local_rank = local_rank;
  facts.local_size = local_size;
  facts.usable_cpus = 8;
  facts.threads = 2;
  facts.cpus_shared = true;
  facts.memory.usable_bytes = 64 * kGiB;
  facts.memory.bound_by = "MemAvailable";
  PathProbe probe;
  probe.path = "/data/train.h5";
  probe.readable = true;
  probe.hdf5_signature = true;
  probe.size_bytes = 1 << 20;
  probe.seconds = 0.01 * (rank + 1);
  facts.datasets = {{"train", probe}};
  CheckpointDirectoryAccess checkpoints;
  checkpoints.path = "/ckpt";
  checkpoints.writable = true;
  checkpoints.free_bytes = 1024 * kGiB;
  facts.checkpoint_dir = checkpoints;
  return facts;
}

// `nodes` nodes with `per_node` ranks each.
std::vector<RankFacts> cluster(int nodes, int per_node) {
  std::vector<RankFacts> ranks;
  for (int n = 0; n < nodes; ++n)
    for (int l = 0; l < per_node; ++l)
      ranks.push_back(rank_on(n * per_node + l, "node" + std::to_string(n), l, per_node));
  return ranks;
}

GpuDevice gpu(const std::string& bus, int major = 9) {
  GpuDevice device;
  device.name = major >= 8 ? "NVIDIA H100" : "Tesla V100";
  device.pci_bus_id = bus;
  device.compute_major = major;
  device.total_bytes = 80 * kGiB;
  return device;
}

class ChecksTest : public ::testing::Test {
 protected:
  ChecksTest() {
    config.data.path = "/data/train.h5";
    config.training.global_batch_size = 8;
    config.training.micro_batch_size = 2;
  }
  PreflightContext context(std::vector<RankFacts> ranks, DeviceKind device = DeviceKind::kCpu) {
    const int size = static_cast<int>(ranks.size());
    return PreflightContext{config, size, device, std::move(ranks), 0, {}};
  }
  config::Config config;
};

// --- pretrained model -----------------------------------------------------

TEST_F(ChecksTest, PretrainedModelUnreadableOnSomeNodesIsNamedWithTheFix) {
  config.model.from_pretrained = "/models/tiny";
  auto ranks = cluster(2, 2);
  for (auto& facts : ranks) {
    PathProbe probe;
    probe.path = "/models/tiny/config.json";
    probe.readable = facts.host == "node0";
    if (!probe.readable) probe.problem = "does not exist";
    facts.model_config = probe;
  }
  const Check check = check_pretrained_model(context(ranks));
  EXPECT_EQ(check.status, CheckStatus::kFail);
  EXPECT_EQ(check.code, ExitCode::kData);
  EXPECT_NE(check.message.find(rank_label(ranks[2]) +
                               ": model.from_pretrained /models/tiny/config.json does not exist "
                               "(and on 1 more rank)"),
            std::string::npos)
      << check.message;
  EXPECT_NE(check.remediation.find("huggingface-cli download"), std::string::npos);
}

// --- layout ---------------------------------------------------------------

TEST_F(ChecksTest, BatchLayoutPassesAndNamesTheAccumulation) {
  const Check check = check_batch_layout(config, 2);
  EXPECT_EQ(check.status, CheckStatus::kPass);
  EXPECT_EQ(check.message,
            "global_batch_size 8 = micro_batch_size 2 x 2 ranks x 2 accumulation steps");
}

// The ranks of a tensor group read the same batches: the arithmetic counts
// world / T data-parallel ranks and says so.
TEST_F(ChecksTest, BatchLayoutCountsDataParallelRanksUnderTensorParallelism) {
  config.parallel.tensor_parallel_size = 4;
  config.training.global_batch_size = 4;
  const Check check = check_batch_layout(config, 4);
  EXPECT_EQ(check.status, CheckStatus::kPass) << check.message;
  EXPECT_EQ(check.message,
            "global_batch_size 4 = micro_batch_size 2 x 1 data-parallel ranks (4 ranks / "
            "tensor_parallel_size 4) x 2 accumulation steps");
}

TEST_F(ChecksTest, BatchLayoutFailsWithTheNearestValidChoices) {
  config.training.global_batch_size = 6;
  const Check check = check_batch_layout(config, 4);
  EXPECT_EQ(check.status, CheckStatus::kFail);
  EXPECT_EQ(check.code, ExitCode::kUsage);
  EXPECT_NE(check.message.find("2 x 4 = 8"), std::string::npos) << check.message;
  EXPECT_NE(check.remediation.find("set global_batch_size to 8"), std::string::npos);
}

TEST_F(ChecksTest, CpuThreadsWithinCpusPass) {
  const Check check = check_devices(context(cluster(2, 4)));  // 4 x 2 threads on 8 CPUs
  EXPECT_EQ(check.status, CheckStatus::kPass) << check.message;
  EXPECT_EQ(check.predicted, 8);
  EXPECT_EQ(check.threshold, 8);
}

TEST_F(ChecksTest, CpuOversubscriptionOnAnyNodeWarns) {
  auto ranks = cluster(2, 2);
  ranks.push_back(rank_on(4, "node1", 2, 5));
  ranks.push_back(rank_on(5, "node1", 3, 5));
  ranks.push_back(rank_on(6, "node1", 4, 5));  // node1: 5 ranks x 2 threads on 8 CPUs
  const Check check = check_devices(context(ranks));
  EXPECT_EQ(check.status, CheckStatus::kWarn);
  EXPECT_NE(check.message.find("host node1 is oversubscribed: 10 compute threads on 8"),
            std::string::npos)
      << check.message;
  EXPECT_NE(check.remediation.find("OMP_NUM_THREADS"), std::string::npos);
}

TEST_F(ChecksTest, CpuRanksBoundToTheirOwnCpusAreJudgedEach) {
  auto ranks = cluster(1, 4);
  for (auto& r : ranks) {
    r.cpus_shared = false;
    r.usable_cpus = 2;
  }
  EXPECT_EQ(check_devices(context(ranks)).status, CheckStatus::kPass);
  ranks[3].usable_cpus = 1;  // 2 threads on 1 CPU
  const Check check = check_devices(context(ranks));
  EXPECT_EQ(check.status, CheckStatus::kWarn);
  EXPECT_NE(check.message.find("2 compute threads on 1 usable CPUs"), std::string::npos);
}

TEST_F(ChecksTest, OneGpuPerRankPasses) {
  auto ranks = cluster(2, 2);
  for (auto& r : ranks) r.gpus.devices = {gpu("0000:1b:00.0"), gpu("0000:2c:00.0")};
  const Check check = check_devices(context(ranks, DeviceKind::kCuda));
  EXPECT_EQ(check.status, CheckStatus::kPass) << check.message;
}

TEST_F(ChecksTest, RanksThatEachSeeTheirOwnGpuPass) {
  // srun --gpus-per-task=1: every rank sees one GPU, as ordinal 0.
  auto ranks = cluster(1, 2);
  ranks[0].gpus.devices = {gpu("0000:1b:00.0")};
  ranks[1].gpus.devices = {gpu("0000:2c:00.0")};
  EXPECT_EQ(check_devices(context(ranks, DeviceKind::kCuda)).status, CheckStatus::kPass);
}

TEST_F(ChecksTest, MoreRanksThanGpusOnANodeFails) {
  auto ranks = cluster(1, 3);
  for (auto& r : ranks) r.gpus.devices = {gpu("0000:1b:00.0"), gpu("0000:2c:00.0")};
  const Check check = check_devices(context(ranks, DeviceKind::kCuda));
  EXPECT_EQ(check.status, CheckStatus::kFail);
  EXPECT_EQ(check.code, ExitCode::kUsage);
  EXPECT_EQ(check.message,
            "host node0: rank 0 and rank 2 would share GPU 0000:1b:00.0 (3 ranks, 2 GPUs visible)");
  EXPECT_NE(check.remediation.find("at most 2 ranks on host node0"), std::string::npos);
  EXPECT_NE(check.remediation.find("parallel.share_devices: true"), std::string::npos);
}

TEST_F(ChecksTest, SharedGpusWarnWhenSharingIsAsked) {
  config.parallel.share_devices = true;
  auto ranks = cluster(1, 3);
  for (auto& r : ranks) r.gpus.devices = {gpu("0000:1b:00.0"), gpu("0000:2c:00.0")};
  const Check check = check_devices(context(ranks, DeviceKind::kCuda));
  EXPECT_EQ(check.status, CheckStatus::kWarn) << check.message;
  EXPECT_NE(check.message.find("rank 0 and rank 2 share GPU 0000:1b:00.0"), std::string::npos)
      << check.message;
}

TEST_F(ChecksTest, RankWithoutGpuFailsWithTheReason) {
  auto ranks = cluster(1, 2);
  ranks[0].gpus.devices = {gpu("0000:1b:00.0")};
  ranks[1].gpus.problem = "cudaGetDeviceCount failed: no CUDA-capable device is detected";
  const Check check = check_devices(context(ranks, DeviceKind::kCuda));
  EXPECT_EQ(check.status, CheckStatus::kFail);
  EXPECT_EQ(check.message,
            "rank 1 (host node0) sees no GPU: cudaGetDeviceCount failed: no CUDA-capable device "
            "is detected");
}

TEST_F(ChecksTest, IdleGpusWarn) {
  auto ranks = cluster(1, 1);
  ranks[0].gpus.devices = {gpu("0000:1b:00.0"), gpu("0000:2c:00.0")};
  const Check check = check_devices(context(ranks, DeviceKind::kCuda));
  EXPECT_EQ(check.status, CheckStatus::kWarn);
  EXPECT_EQ(check.message, "GPUs left idle: host node0: 2 GPUs, 1 ranks");
}

TEST_F(ChecksTest, DtypeAutoIsFp32OnCpuAndBf16OnGpu) {
  config::TrainingConfig training;  // dtype auto
  EXPECT_EQ(config::resolved_dtype(training, DeviceKind::kCpu), config::ComputeDtype::kFp32);
  EXPECT_EQ(config::resolved_dtype(training, DeviceKind::kCuda), config::ComputeDtype::kBf16);
  training.dtype = config::ComputeDtype::kFp32;
  EXPECT_EQ(config::resolved_dtype(training, DeviceKind::kCuda), config::ComputeDtype::kFp32);
  const Check check = check_dtype(context(cluster(1, 2)));
  EXPECT_EQ(check.status, CheckStatus::kPass);
  EXPECT_EQ(check.message, "training.dtype auto (fp32) runs on every device");
}

TEST_F(ChecksTest, Bf16OnCpuWarnsWithoutNativeInstructions) {
  config.training.dtype = config::ComputeDtype::kBf16;
  auto ranks = cluster(2, 1);
  ranks[0].cpu_native_bf16 = true;
  Check check = check_dtype(context(ranks));
  EXPECT_EQ(check.status, CheckStatus::kWarn);
  EXPECT_NE(check.message.find("host node1 lacks avx512_bf16/amx_bf16"), std::string::npos);
  EXPECT_NE(check.remediation.find("training.dtype: fp32"), std::string::npos);
  ranks[1].cpu_native_bf16 = true;
  check = check_dtype(context(ranks));
  EXPECT_EQ(check.status, CheckStatus::kPass);
}

TEST_F(ChecksTest, Bf16OnGpusBeforeAmpereFails) {
  auto ranks = cluster(1, 2);
  ranks[0].gpus.devices = {gpu("0000:1b:00.0"), gpu("0000:2c:00.0", 7)};
  ranks[1].gpus.devices = ranks[0].gpus.devices;
  const Check check = check_dtype(context(ranks, DeviceKind::kCuda));  // auto -> bf16
  EXPECT_EQ(check.status, CheckStatus::kFail);
  EXPECT_EQ(check.code, ExitCode::kUsage);
  EXPECT_NE(check.message.find("rank 1 (host node0) uses Tesla V100 (7.0)"), std::string::npos)
      << check.message;
  ranks[1].gpus.devices[1].compute_major = 8;
  EXPECT_EQ(check_dtype(context(ranks, DeviceKind::kCuda)).status, CheckStatus::kPass);
}

TEST_F(ChecksTest, DtypeOnAMissingGpuIsSkippedWithTheReason) {
  auto ranks = cluster(1, 1);
  const Check check = check_dtype(context(ranks, DeviceKind::kCuda));
  EXPECT_EQ(check.status, CheckStatus::kSkipped);
  EXPECT_EQ(check.message, "rank 0 (host node0) has no GPU to check (see layout.devices)");
}

// --- data -----------------------------------------------------------------

TEST_F(ChecksTest, DatasetOpensEverywhere) {
  const auto checks = check_datasets_open(context(cluster(2, 2)));
  ASSERT_EQ(checks.size(), 2u);
  EXPECT_EQ(checks[0].id, "data.open");
  EXPECT_EQ(checks[0].status, CheckStatus::kPass);
  EXPECT_DOUBLE_EQ(*checks[0].measured, 0.04);  // the slowest rank
  EXPECT_EQ(checks[0].threshold, config.preflight.first_batch_timeout_s);
  EXPECT_EQ(checks[1].id, "eval.open");
  EXPECT_EQ(checks[1].status, CheckStatus::kSkipped);
  EXPECT_EQ(checks[1].message,
            "validation is off (eval.path empty or eval.interval_steps 0): no validation set to "
            "check");
}

TEST_F(ChecksTest, DatasetMissingOnSomeRanksNamesTheFirst) {
  auto ranks = cluster(2, 2);
  for (int r : {2, 3}) {
    auto& probe = ranks[r].datasets[0].probe;
    probe.readable = false;
    probe.problem = "does not exist";
    probe.hint = "check data.path";
  }
  const auto checks = check_datasets_open(context(ranks));
  EXPECT_EQ(checks[0].status, CheckStatus::kFail);
  EXPECT_EQ(checks[0].code, ExitCode::kData);
  EXPECT_EQ(checks[0].message,
            "rank 2 (host node1): data.path /data/train.h5 does not exist (and on 1 more rank)");
  EXPECT_EQ(checks[0].remediation, "check data.path");
}

TEST_F(ChecksTest, EvalDatasetIsCheckedWhenValidationRuns) {
  config.eval.path = "/data/val.h5";
  config.eval.interval_steps = 10;
  auto ranks = cluster(1, 2);
  for (auto& r : ranks) {
    PathProbe probe;
    probe.path = "/data/val.h5";
    probe.timed_out = true;
    probe.problem = "could not open within 60 s";
    r.datasets.push_back({"eval", probe});
  }
  const auto checks = check_datasets_open(context(ranks));
  ASSERT_EQ(checks.size(), 2u);
  EXPECT_EQ(checks[1].id, "eval.open");
  EXPECT_EQ(checks[1].status, CheckStatus::kFail);
  EXPECT_EQ(checks[1].message,
            "rank 0 (host node0): eval.path /data/val.h5 could not open within 60 s (and on 1 "
            "more rank)");
}

TEST_F(ChecksTest, DefaultFormatCheckLooksForTheHdf5Signature) {
  auto ranks = cluster(1, 2);
  PreflightReport report("cpu");
  auto ctx = context(ranks);
  for (auto& c : check_datasets_open(ctx)) report.add(c);
  check_dataset_formats(ctx, hdf5_signature_validator(), report);
  EXPECT_EQ(report.find("data.format")->status, CheckStatus::kPass);

  ranks[0].datasets[0].probe.hdf5_signature = false;
  PreflightReport bad("cpu");
  auto bad_ctx = context(ranks);
  for (auto& c : check_datasets_open(bad_ctx)) bad.add(c);
  check_dataset_formats(bad_ctx, hdf5_signature_validator(), bad);
  const Check* check = bad.find("data.format");
  EXPECT_EQ(check->status, CheckStatus::kFail);
  EXPECT_EQ(check->code, ExitCode::kData);
  EXPECT_NE(check->message.find("is not an HDF5 file"), std::string::npos);
  EXPECT_NE(check->remediation.find("nss_prepare_data"), std::string::npos);
}

TEST_F(ChecksTest, FormatCheckIsSkippedWhenTheDatasetDidNotOpen) {
  auto ranks = cluster(1, 1);
  ranks[0].datasets[0].probe.readable = false;
  ranks[0].datasets[0].probe.problem = "is a directory";
  PreflightReport report("cpu");
  auto ctx = context(ranks);
  for (auto& c : check_datasets_open(ctx)) report.add(c);
  check_dataset_formats(ctx, hdf5_signature_validator(), report);
  const Check* check = report.find("data.format");
  EXPECT_EQ(check->status, CheckStatus::kSkipped);
  EXPECT_EQ(check->message, "data.path did not open on every rank (see data.open)");
}

TEST_F(ChecksTest, ValidatorCanBeSwappedAndRunsUnderTheDeadline) {
  config.preflight.first_batch_timeout_s = 0.3;
  auto ctx = context(cluster(1, 1));
  PreflightReport report("cpu");
  for (auto& c : check_datasets_open(ctx)) report.add(c);

  // lib/data's validation reports finer checks.
  check_dataset_formats(
      ctx,
      [](const DatasetRef& dataset, const PathProbe&) {
        return std::vector<Check>{
            Check::pass("data.format", ExitCode::kData, dataset.path + ": contiguous /tokens"),
            Check::fail("data.tokens_in_vocabulary", ExitCode::kData, "max_token_id 300",
                        "model.vocab_size")};
      },
      report);
  EXPECT_EQ(report.find("data.tokens_in_vocabulary")->status, CheckStatus::kFail);

  // A validator that hangs fails at the deadline.
  PreflightReport slow("cpu");
  for (auto& c : check_datasets_open(ctx)) slow.add(c);
  const auto start = std::chrono::steady_clock::now();
  check_dataset_formats(
      ctx,
      [](const DatasetRef&, const PathProbe&) {
        ::sleep(30);
        return std::vector<Check>{};
      },
      slow);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 2.0);
  const Check* check = slow.find("data.format");
  EXPECT_EQ(check->status, CheckStatus::kFail);
  EXPECT_EQ(check->code, ExitCode::kData);
  EXPECT_NE(check->message.find("did not finish within 0.3 s"), std::string::npos);

  // A validator that throws is a failure with the error's code.
  PreflightReport throwing("cpu");
  for (auto& c : check_datasets_open(ctx)) throwing.add(c);
  check_dataset_formats(
      ctx,
      [](const DatasetRef&, const PathProbe&) -> std::vector<Check> {
        throw DataError("data", "/tokens is chunked", "rebuild with nss_prepare_data");
      },
      throwing);
  EXPECT_EQ(throwing.find("data.format")->code, ExitCode::kData);
  EXPECT_EQ(throwing.find("data.format")->message, "[data] /tokens is chunked");
}

// --- dataloader host memory -----------------------------------------------

TEST_F(ChecksTest, DataloaderBytesFollowTheFormula) {
  config.data.num_workers = 3;
  config.data.prefetch_factor = 4;
  config.training.micro_batch_size = 2;
  config.data.seq_len = 127;
  // (128 tokens + 1 sample id) x 8 B + 127 target-mask bytes per sample
  EXPECT_EQ(dataloader_bytes_per_rank(config), 3u * 4 * 2 * ((128 + 1) * 8 + 127) * 2);
  config.data.num_workers = 0;  // the caller loads: counted as one worker
  EXPECT_EQ(dataloader_bytes_per_rank(config), 1u * 4 * 2 * ((128 + 1) * 8 + 127) * 2);
  config.data.packing = config::Packing::kDocuments;  // + positions and segments
  EXPECT_EQ(dataloader_bytes_per_rank(config),
            1u * 4 * 2 * ((128 + 1) * 8 + 127 + 2 * 127 * 8) * 2);
}

TEST_F(ChecksTest, DataloaderWellWithinMemoryPasses) {
  PreflightReport report("cpu");
  const Check check = check_dataloader_host_memory(context(cluster(2, 4)), report);
  EXPECT_EQ(check.status, CheckStatus::kPass) << check.message;
  EXPECT_EQ(*report.dataloader.estimated_bytes, 4 * dataloader_bytes_per_rank(config));
  EXPECT_EQ(*report.dataloader.available_bytes, 64 * kGiB);
}

TEST_F(ChecksTest, DataloaderDecidesFromTheTightestNodeNotNodeZero) {
  // 1 MiB per rank (8 workers x 32 prefetch x 2 sequences x 2 x 1 KiB: 113 tokens and
  // 1 id x 8 B + 112 mask bytes), 4 ranks per node.
  config.data.num_workers = 8;
  config.data.prefetch_factor = 32;
  config.data.seq_len = 112;
  const std::uint64_t per_rank = dataloader_bytes_per_rank(config);
  ASSERT_EQ(per_rank, std::uint64_t{1} << 20);
  auto ranks = cluster(2, 4);
  // node1 has 6 MiB usable (one of its ranks sees less): 4 MiB = 67% -> warn.
  for (int r = 4; r < 8; ++r) ranks[r].memory.usable_bytes = 8u << 20;
  ranks[6].memory.usable_bytes = 6u << 20;
  ranks[6].memory.bound_by = "cgroup v2 /sys/fs/cgroup/job_1";
  PreflightReport report("cpu");
  Check check = check_dataloader_host_memory(context(ranks), report);
  EXPECT_EQ(check.status, CheckStatus::kWarn) << check.message;
  EXPECT_EQ(check.code, ExitCode::kResources);
  EXPECT_NE(check.message.find("host node1: 4 ranks"), std::string::npos) << check.message;
  EXPECT_NE(check.message.find("bound by cgroup v2 /sys/fs/cgroup/job_1"), std::string::npos);
  EXPECT_EQ(*check.predicted, 4.0 * per_rank);
  EXPECT_DOUBLE_EQ(*check.threshold, 0.8 * (6u << 20));
  EXPECT_EQ(*report.dataloader.available_bytes, 6u << 20);

  // 4.5 MiB usable: 89% -> fail, with a setting that fits under the warn fraction.
  ranks[6].memory.usable_bytes = (9u << 20) / 2;
  check = check_dataloader_host_memory(context(ranks), report);
  EXPECT_EQ(check.status, CheckStatus::kFail);
  EXPECT_EQ(check.code, ExitCode::kResources);
  // 0.5 x 4.5 MiB / (4 ranks x 4 KiB per queued batch) = 144 batches.
  EXPECT_NE(check.remediation.find("data.num_workers x data.prefetch_factor <= 144 (now 8 x 32)"),
            std::string::npos)
      << check.remediation;
  EXPECT_NE(check.remediation.find("--set data.num_workers=8 --set data.prefetch_factor=18"),
            std::string::npos);
}

TEST_F(ChecksTest, DataloaderThatCannotFitEvenOneBatchSaysWhatToShrink) {
  config.training.micro_batch_size = 8;
  config.data.seq_len = 4095;
  auto ranks = cluster(1, 2);
  for (auto& r : ranks) r.memory.usable_bytes = 512u << 10;
  PreflightReport report("cpu");
  const Check check = check_dataloader_host_memory(context(ranks), report);
  EXPECT_EQ(check.status, CheckStatus::kFail);
  EXPECT_NE(check.remediation.find("even one queued batch per rank"), std::string::npos);
  EXPECT_NE(check.remediation.find("training.micro_batch_size"), std::string::npos);
}

// On a GPU the checkpoint reads pinned host copies of the masters and moments
// (12 bytes per trainable parameter / N): they are host memory beside the
// queues. On a CPU the checkpoint reads the state itself.
TEST_F(ChecksTest, GpuRanksCountThePinnedHostCopyOfTheCheckpointedState) {
  const auto ranks = cluster(1, 2);
  EXPECT_EQ(checkpoint_host_copy_bytes(context(ranks)), 0u);
  const std::uint64_t copy = checkpoint_host_copy_bytes(context(ranks, DeviceKind::kCuda));
  std::uint64_t shards = 0;
  for (const auto& unit : model::unit_layouts(config, 2))
    shards += static_cast<std::uint64_t>(unit.shard_size(true));
  EXPECT_EQ(copy, 3 * 4 * shards);
  PreflightReport report("cuda");
  Check check = check_dataloader_host_memory(context(ranks, DeviceKind::kCuda), report);
  EXPECT_EQ(*report.dataloader.estimated_bytes, 2 * (dataloader_bytes_per_rank(config) + copy));
  EXPECT_NE(check.message.find("pinned host copy of the checkpointed state"), std::string::npos)
      << check.message;

  // Copies alone above the warn fraction: more ranks divide them.
  auto tight = ranks;
  for (auto& r : tight) r.memory.usable_bytes = copy;
  check = check_dataloader_host_memory(context(tight, DeviceKind::kCuda), report);
  EXPECT_EQ(check.status, CheckStatus::kFail);
  EXPECT_NE(check.remediation.find("run more ranks"), std::string::npos) << check.remediation;
}

TEST_F(ChecksTest, DataloaderWithUnknownMemory) {
  auto ranks = cluster(2, 1);
  ranks[1].memory.usable_bytes.reset();
  PreflightReport report("cpu");
  Check check = check_dataloader_host_memory(context(ranks), report);
  EXPECT_EQ(check.status, CheckStatus::kWarn);
  EXPECT_NE(check.message.find("unknown on host node1"), std::string::npos);
  ranks[0].memory.usable_bytes.reset();
  check = check_dataloader_host_memory(context(ranks), report);
  EXPECT_EQ(check.status, CheckStatus::kSkipped);
  EXPECT_NE(check.message.find("usable host memory is unknown on host node0"), std::string::npos);
}

// --- checkpoints ----------------------------------------------------------

TEST_F(ChecksTest, CheckpointDirectoryNamesTheFirstRankThatCannotWrite) {
  auto ranks = cluster(2, 2);
  config.checkpoint.dir = "/ckpt";
  EXPECT_EQ(check_checkpoint_directory(context(ranks)).status, CheckStatus::kPass);
  for (int r : {1, 3}) {
    ranks[r].checkpoint_dir->writable = false;
    ranks[r].checkpoint_dir->problem = "cannot create a file in it: Read-only file system";
  }
  const Check check = check_checkpoint_directory(context(ranks));
  EXPECT_EQ(check.status, CheckStatus::kFail);
  EXPECT_EQ(check.code, ExitCode::kCheckpoint);
  EXPECT_EQ(check.message,
            "rank 1 (host node0): checkpoint.dir /ckpt cannot create a file in it: Read-only file "
            "system (and on 1 more rank)");
}

TEST_F(ChecksTest, CheckpointSpaceFailsBelowOneCheckpointAndWarnsBelowTheKeptOnes) {
  config.checkpoint.dir = "/ckpt";
  config.checkpoint.interval_steps = 10;
  config.checkpoint.keep_last = 2;
  config.training.max_steps = 100;
  const std::uint64_t one = predicted_checkpoint_bytes(config, 2);
  // 12 bytes per trainable parameter of the tiny preset (125504), over both
  // ranks' files, with their shard padding and HDF5 overhead.
  EXPECT_GE(one, 12u * 125504);
  EXPECT_LT(one, 12u * 125504 + 2 * (64u << 10) + 4096);
  // Hybrid sharding: the replicas write each shard once between them, so the
  // step is as large as under full sharding, plus each rank file's overhead.
  config::Config hybrid = config;
  hybrid.parallel.shard_group_size = 2;
  const std::uint64_t hybrid_bytes = predicted_checkpoint_bytes(hybrid, 8);
  EXPECT_GE(hybrid_bytes, 12u * 125504);
  EXPECT_LT(hybrid_bytes, 12u * 125504 + 8 * (64u << 10) + 4096);
  auto ranks = cluster(1, 2);
  ranks[1].checkpoint_dir->free_bytes = 3 * one;  // the 2 kept + the one being written
  EXPECT_EQ(check_checkpoint_space(context(ranks)).status, CheckStatus::kPass);
  ranks[1].checkpoint_dir->free_bytes = 2 * one;
  Check check = check_checkpoint_space(context(ranks));
  EXPECT_EQ(check.status, CheckStatus::kWarn);
  EXPECT_NE(check.message.find("but not the 3 the run holds at once"), std::string::npos)
      << check.message;
  ranks[1].checkpoint_dir->free_bytes = one - 1;
  check = check_checkpoint_space(context(ranks));
  EXPECT_EQ(check.status, CheckStatus::kFail);
  EXPECT_EQ(check.code, ExitCode::kResources);
  EXPECT_NE(check.message.find("rank 1 (host node0)"), std::string::npos) << check.message;
}

TEST_F(ChecksTest, CheckpointResumePathMustBeACommittedStep) {
  const std::string dir = nss::testing::scratch_dir("preflight_resume");
  config.checkpoint.dir = dir;
  const auto ranks = cluster(1, 1);
  config.checkpoint.resume = dir + "/missing";
  Check check = check_checkpoint_resume(context(ranks));
  EXPECT_EQ(check.status, CheckStatus::kFail);
  EXPECT_EQ(check.code, ExitCode::kCheckpoint);
  EXPECT_NE(check.message.find("does not exist"), std::string::npos) << check.message;

  std::filesystem::create_directories(dir + "/step_00000004.tmp");
  std::ofstream(dir + "/step_00000004.tmp/metadata.json") << "{}";
  config.checkpoint.resume = dir + "/step_00000004.tmp";
  check = check_checkpoint_resume(context(ranks));
  EXPECT_EQ(check.status, CheckStatus::kFail);
  EXPECT_NE(check.message.find("was never committed"), std::string::npos) << check.message;

  std::filesystem::create_directories(dir + "/step_00000002");
  std::ofstream(dir + "/step_00000002/metadata.json") << "{\"truncated";
  config.checkpoint.resume = dir + "/step_00000002";
  check = check_checkpoint_resume(context(ranks));
  EXPECT_EQ(check.status, CheckStatus::kFail);
  EXPECT_NE(check.message.find("cannot be resumed from"), std::string::npos) << check.message;

  config.checkpoint.resume = "auto";  // the damaged newest step is only a warning: it falls back
  EXPECT_EQ(check_checkpoint_resume(context(ranks)).status, CheckStatus::kWarn);
  config.checkpoint.resume = "never";  // a fresh start among committed steps would collide
  check = check_checkpoint_resume(context(ranks));
  EXPECT_EQ(check.status, CheckStatus::kFail);
  EXPECT_NE(check.message.find("checkpoint.resume is never, but"), std::string::npos)
      << check.message;
}

// --- the whole report -----------------------------------------------------

TEST_F(ChecksTest, BuildReportRunsBuiltInChecksThenStages) {
  PreflightPlan plan;
  plan.stages.push_back({"model.parameters", [](PreflightReport& report, const PreflightContext&) {
                           report.model.parameters = 123;
                           report.add(Check::pass("model.parameters", ExitCode::kInternal, "ok"));
                         }});
  plan.stages.push_back({"memory.synthetic_step", [](PreflightReport&, const PreflightContext&) {
                           throw ResourceError("preflight", "out of memory at micro-batch 8",
                                               "micro_batch_size 4 fits");
                         }});
  const PreflightReport report = build_report(context(cluster(1, 2)), plan);
  std::vector<std::string> ids;
  for (const auto& check : report.checks()) ids.push_back(check.id);
  EXPECT_EQ(ids, (std::vector<std::string>{
                     "layout.batch", "layout.devices", "layout.dtype", "data.open", "eval.open",
                     "data.format", "checkpoint.directory", "checkpoint.space", "checkpoint.resume",
                     "dataloader.host_memory", "model.parameters", "memory.synthetic_step",
                     "layout.parallel"}));
  EXPECT_EQ(*report.model.parameters, 123);
  const Verdict verdict = report.verdict(false);
  EXPECT_FALSE(verdict.go);
  EXPECT_EQ(verdict.code, ExitCode::kResources);
  EXPECT_EQ(verdict.hint, "micro_batch_size 4 fits");
}

}  // namespace
}  // namespace nss::preflight
