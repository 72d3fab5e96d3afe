// The report: verdict rules, guarded checks, preflight.json's schema and the
// log table.
#include <filesystem>
#include <fstream>
#include <new>

#include <gtest/gtest.h>

#include "core/fs.h"
#include "preflight/report_output.h"
#include "support/test_paths.h"

namespace nss::preflight {
namespace {

PreflightReport sample_report() {
  PreflightReport report("cpu");
  report.add(Check::pass("layout.batch", ExitCode::kUsage, "8 = 2 x 2 x 2"));
  report.add(Check::warn("layout.devices", ExitCode::kUsage, "oversubscribed", "fewer ranks")
                 .with_numbers(4, std::nullopt, 2, "threads"));
  report.add(Check::skipped("eval.open", ExitCode::kData, "eval.path is empty"));
  return report;
}

TEST(Verdict, GoWhenNothingFailed) {
  const Verdict verdict = sample_report().verdict(false);
  EXPECT_TRUE(verdict.go);
  EXPECT_EQ(verdict.code, ExitCode::kOk);
  EXPECT_EQ(verdict.reason, "go: 1 check passed, 1 warning, 1 skipped");
}

TEST(Verdict, FirstFailureDecidesTheCode) {
  PreflightReport report = sample_report();
  report.add(Check::fail("data.open", ExitCode::kData, "missing", "fix data.path"));
  report.add(Check::fail("dataloader.host_memory", ExitCode::kResources, "too big", "smaller"));
  const Verdict verdict = report.verdict(false);
  EXPECT_FALSE(verdict.go);
  EXPECT_EQ(verdict.code, ExitCode::kData);
  EXPECT_EQ(verdict.reason, "no-go: [data.open] missing (+1 more problem in preflight.json)");
  EXPECT_EQ(verdict.hint, "fix data.path");
}

TEST(Verdict, FailOnWarningTurnsTheFirstWarningIntoNoGo) {
  const Verdict verdict = sample_report().verdict(true);
  EXPECT_FALSE(verdict.go);
  EXPECT_EQ(verdict.code, ExitCode::kUsage);
  EXPECT_EQ(
      verdict.reason,
      "no-go: [layout.devices] oversubscribed (a warning; preflight.fail_on_warning is true)");
  EXPECT_EQ(verdict.hint, "fewer ranks");
}

TEST(Verdict, SkippedChecksNeverDecide) {
  PreflightReport report("cpu");
  report.add(Check::skipped("a", ExitCode::kData, "why"));
  EXPECT_TRUE(report.verdict(true).go);
}

TEST(Report, GuardedCheckThatThrowsIsAFailureWithItsCode) {
  PreflightReport report("cpu");
  report.run_guarded("data.format", [] { throw DataError("data", "bad /tokens", "rebuild it"); });
  report.run_guarded("memory.synthetic_step", [] { throw std::bad_alloc(); });
  report.run_guarded("model.parameters", [] { throw std::runtime_error("oops"); });
  report.run_guarded("fine", [&report] { report.add(Check::pass("fine", ExitCode::kOk, "ok")); });
  const auto& checks = report.checks();
  ASSERT_EQ(checks.size(), 4u);
  EXPECT_EQ(checks[0].status, CheckStatus::kFail);
  EXPECT_EQ(checks[0].code, ExitCode::kData);
  EXPECT_EQ(checks[0].message, "[data] bad /tokens");
  EXPECT_EQ(checks[0].remediation, "rebuild it");
  EXPECT_EQ(checks[1].code, ExitCode::kResources);
  EXPECT_EQ(checks[1].status, CheckStatus::kFail);
  EXPECT_EQ(checks[2].code, ExitCode::kInternal);
  EXPECT_EQ(checks[2].message, "unexpected error: oops");
  EXPECT_EQ(checks[3].status, CheckStatus::kPass);
}

TEST(Report, UsableMeansPassedOrWarned) {
  PreflightReport report = sample_report();
  report.add(Check::fail("data.open", ExitCode::kData, "missing", "fix"));
  EXPECT_TRUE(report.usable("layout.batch"));
  EXPECT_TRUE(report.usable("layout.devices"));
  EXPECT_FALSE(report.usable("eval.open"));
  EXPECT_FALSE(report.usable("data.open"));
  EXPECT_FALSE(report.usable("not.there"));
  EXPECT_EQ(report.find("data.open")->message, "missing");
}

RankFacts sample_facts() {
  RankFacts facts;
  facts.rank = 1;
  facts.host = "n7";
  facts.local_rank = 1;
  facts.local_size = 2;
  facts.usable_cpus = 16;
  facts.threads = 8;
  facts.cpus_shared = false;
  facts.cpu_native_bf16 = true;
  facts.memory.usable_bytes = 1 << 30;
  facts.memory.bound_by = "SLURM_MEM_PER_NODE";
  facts.memory.limits = {{"MemAvailable", 2u << 30, "meminfo"},
                         {"SLURM_MEM_PER_NODE", 1u << 30, "1024 MiB per node"}};
  facts.memory.notes = {"cgroup: none"};
  GpuDevice gpu;
  gpu.index = 0;
  gpu.name = "NVIDIA H100";
  gpu.pci_bus_id = "0000:1b:00.0";
  gpu.compute_major = 9;
  gpu.total_bytes = 80ull << 30;
  gpu.free_bytes = 79ull << 30;
  facts.gpus.devices = {gpu};
  PathProbe probe;
  probe.path = "/data/train.h5";
  probe.readable = true;
  probe.seconds = 0.25;
  probe.size_bytes = 4096;
  probe.hdf5_signature = true;
  facts.datasets = {{"train", probe}};
  probe.path = "/models/tiny/config.json";
  probe.hdf5_signature = false;
  facts.model_config = probe;
  return facts;
}

TEST(RankFactsJson, RoundTrips) {
  const RankFacts facts = sample_facts();
  const RankFacts back =
      facts_from_json(nlohmann::ordered_json::parse(facts_to_json(facts).dump()));
  EXPECT_EQ(facts_to_json(back), facts_to_json(facts));
  EXPECT_EQ(back.gpus.devices.at(0).compute_major, 9);
  EXPECT_EQ(*back.gpus.devices.at(0).free_bytes, 79ull << 30);
  EXPECT_EQ(back.model_config->path, "/models/tiny/config.json");
  EXPECT_EQ(back.datasets.at(0).probe.path, "/data/train.h5");
}

TEST(PreflightJson, SchemaWithFieldsTheLaterChecksFill) {
  PreflightReport report = sample_report();
  const Verdict verdict = report.verdict(false);
  auto json = report_to_json(report, verdict, 2, 1.5, {sample_facts()});

  std::vector<std::string> keys;
  for (const auto& item : json.items()) keys.push_back(item.key());
  EXPECT_EQ(keys, (std::vector<std::string>{"schema_version", "verdict", "exit_code", "reason",
                                            "world_size", "duration_s", "checks", "model", "memory",
                                            "dataloader", "privacy", "parallel", "ranks"}));
  EXPECT_EQ(json["schema_version"], 1);
  EXPECT_EQ(json["verdict"], "go");
  EXPECT_EQ(json["exit_code"], 0);
  EXPECT_EQ(json["world_size"], 2);
  EXPECT_DOUBLE_EQ(json["duration_s"].get<double>(), 1.5);
  ASSERT_EQ(json["checks"].size(), 3u);
  const auto& warn = json["checks"][1];
  EXPECT_EQ(warn["id"], "layout.devices");
  EXPECT_EQ(warn["status"], "warn");
  EXPECT_EQ(warn["code"], 2);
  EXPECT_EQ(warn["predicted"], 4.0);
  EXPECT_TRUE(warn["measured"].is_null());
  EXPECT_EQ(warn["threshold"], 2.0);
  EXPECT_EQ(warn["unit"], "threads");
  EXPECT_EQ(warn["remediation"], "fewer ranks");
  EXPECT_TRUE(json["checks"][0]["unit"].is_null());
  EXPECT_EQ(json["checks"][2]["status"], "skipped");
  EXPECT_EQ(json["checks"][2]["message"], "eval.path is empty");

  EXPECT_TRUE(json["model"]["parameters"].is_null());
  EXPECT_TRUE(json["model"]["trainable_parameters"].is_null());
  for (const char* key : {"capacity_bytes", "budget_bytes", "predicted_peak_bytes",
                          "measured_peak_bytes", "max_micro_batch_size"})
    EXPECT_TRUE(json["memory"][key].is_null()) << key;
  EXPECT_EQ(json["memory"]["device"], "cpu");
  EXPECT_TRUE(json["memory"]["components"].is_object());
  EXPECT_TRUE(json["dataloader"]["estimated_bytes"].is_null());
  EXPECT_TRUE(json["dataloader"]["first_batch_s"].is_null());
  EXPECT_TRUE(json["privacy"].is_null());   // privacy off
  EXPECT_TRUE(json["parallel"].is_null());  // layout.parallel did not run
  ASSERT_EQ(json["ranks"].size(), 1u);
  EXPECT_EQ(json["ranks"][0]["host"], "n7");
  EXPECT_EQ(json["ranks"][0]["host_memory"]["bound_by"], "SLURM_MEM_PER_NODE");

  report.model.parameters = 1000;
  report.model.trainable_parameters = 10;
  report.memory.capacity_bytes = 100;
  report.memory.budget_bytes = 90;
  report.memory.predicted_peak_bytes = 50;
  report.memory.measured_peak_bytes = 52;
  report.memory.components = {{"master_shards", 30}, {"dataloader_queue", 20}};
  report.memory.max_micro_batch_size = 4;
  report.dataloader.first_batch_s = 0.5;
  ParallelSummary parallel;
  parallel.shard_group_size = 8;
  parallel.replica_groups = 2;
  parallel.nodes = 2;
  parallel.ranks_per_node = 8;
  parallel.step_s = 2.5;
  parallel.best_shard_group_size = 16;
  parallel.compute_source = "synthetic_step";
  parallel.best_tensor_parallel_size = 2;
  parallel.layouts = {{8, 1, 2.5, 0.98, 0.01, 0.0, 1e9, true},
                      {8, 2, 2.4, 1.0, 0.005, 0.3, 5e8, true}};
  report.parallel = parallel;
  json = report_to_json(report, verdict, 2, 1.5, {});
  EXPECT_EQ(json["parallel"]["shard_group_size"], 8);
  EXPECT_EQ(json["parallel"]["step_s"], 2.5);
  EXPECT_EQ(json["parallel"]["best_shard_group_size"], 16);
  EXPECT_EQ(json["parallel"]["compute_source"], "synthetic_step");
  EXPECT_TRUE(json["parallel"]["efficiency"].is_null());
  ASSERT_EQ(json["parallel"]["layouts"].size(), 2u);
  EXPECT_EQ(json["parallel"]["tensor_parallel_size"], 1);
  EXPECT_EQ(json["parallel"]["best_tensor_parallel_size"], 2);
  EXPECT_EQ(json["parallel"]["layouts"][1]["shard_group_size"], 8);
  EXPECT_EQ(json["parallel"]["layouts"][1]["tensor_parallel_size"], 2);
  EXPECT_EQ(json["parallel"]["layouts"][1]["tensor_s"], 0.3);
  EXPECT_EQ(json["parallel"]["layouts"][1]["fits_memory"], true);
  EXPECT_EQ(json["model"]["parameters"], 1000);
  EXPECT_EQ(json["memory"]["components"]["dataloader_queue"], 20);
  EXPECT_EQ(json["memory"]["max_micro_batch_size"], 4);
  EXPECT_EQ(json["dataloader"]["first_batch_s"], 0.5);
}

TEST(PreflightJson, NoGoCarriesTheCode) {
  PreflightReport report = sample_report();
  report.add(Check::fail("data.open", ExitCode::kData, "missing", "fix"));
  const auto json = report_to_json(report, report.verdict(false), 4, 0.1, {});
  EXPECT_EQ(json["verdict"], "no-go");
  EXPECT_EQ(json["exit_code"], 4);
  EXPECT_EQ(json["reason"], "no-go: [data.open] missing");
}

TEST(PreflightJson, WrittenAtomically) {
  const std::string dir = nss::testing::scratch_dir("preflight_json");
  write_file_atomic(dir + "/preflight.json", "old");
  const PreflightReport report = sample_report();
  write_preflight_json(dir, report_to_json(report, report.verdict(false), 1, 0.1, {}));
  const auto json = nlohmann::json::parse(read_text_file(dir + "/preflight.json", "test"));
  EXPECT_EQ(json["verdict"], "go");
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    EXPECT_EQ(entry.path().filename(), "preflight.json");
}

TEST(ReportTable, OneLinePerCheckRemediationUnderProblemsAndTheVerdict) {
  PreflightReport report = sample_report();
  report.add(Check::fail("dataloader.host_memory", ExitCode::kResources, "too big", "shrink it")
                 .with_numbers(double(3ull << 30), std::nullopt, double(2ull << 30), "bytes"));
  const auto lines = format_report_table(report, report.verdict(false));
  ASSERT_EQ(lines.size(), 8u);
  EXPECT_EQ(lines[0].rfind("status", 0), 0u);
  EXPECT_EQ(lines[1].rfind("pass    layout.batch", 0), 0u);
  EXPECT_NE(lines[2].find("4 threads"), std::string::npos);
  EXPECT_NE(lines[3].find("-> fewer ranks"), std::string::npos);
  EXPECT_NE(lines[4].find("skipped"), std::string::npos);
  EXPECT_NE(lines[5].find("3.00 GiB"), std::string::npos);
  EXPECT_NE(lines[5].find("2.00 GiB"), std::string::npos);
  EXPECT_NE(lines[6].find("-> shrink it"), std::string::npos);
  EXPECT_EQ(lines[7], "verdict: no-go: [dataloader.host_memory] too big (exit 3)");
}

}  // namespace
}  // namespace nss::preflight
