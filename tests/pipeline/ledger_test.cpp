#include "pipeline/ledger.h"

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "core/error.h"
#include "support/test_paths.h"

namespace nss::pipeline {
namespace {

const std::vector<std::string> kStages{"prepare", "train", "evaluate"};

void write(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
}

TEST(Ledger, NewLedgerHasEveryStagePending) {
  const auto dir = testing::scratch_dir("ledger_new");
  const Ledger ledger = Ledger::open(dir + "/pipeline.json", kStages);
  ASSERT_EQ(ledger.stages().size(), 3u);
  for (const auto& stage : ledger.stages()) {
    EXPECT_EQ(stage.status, StageStatus::kPending);
    EXPECT_EQ(stage.runs, 0);
  }
  EXPECT_FALSE(std::filesystem::exists(dir + "/pipeline.json"));  // nothing written until save()
}

TEST(Ledger, SavedRecordsReadBackEqual) {
  const auto dir = testing::scratch_dir("ledger_round_trip");
  const std::string path = dir + "/pipeline.json";
  {
    Ledger ledger = Ledger::open(path, kStages);
    auto& train = ledger.stage("train");
    train.status = StageStatus::kInterrupted;
    train.inputs = {{"tokens", "ab12"}, {"training_config", "cd34"}};
    train.outputs["step"] = {"/run/train/checkpoints/step_00000010/metadata.json", "ef56"};
    train.facts = {{"step", 10}, {"epsilon", 1.5}};  // not in key order: kept as written
    train.started = "20261129T090000Z";
    train.ended = "20261129T090100Z";
    train.seconds = 60.5;
    train.total_seconds = 90.25;
    train.runs = 2;
    train.exit_code = 75;
    train.message = "stopped by a signal";
    ledger.summary()["table"] = "/data/t.csv";
    ledger.save();
  }
  const Ledger read = Ledger::open(path, kStages);
  const auto& train = read.stage("train");
  EXPECT_EQ(train.status, StageStatus::kInterrupted);
  EXPECT_EQ(train.inputs.at("training_config"), "cd34");
  EXPECT_EQ(train.outputs.at("step").path, "/run/train/checkpoints/step_00000010/metadata.json");
  EXPECT_EQ(train.outputs.at("step").sha256, "ef56");
  EXPECT_EQ(train.facts.dump(), R"({"step":10,"epsilon":1.5})");
  EXPECT_EQ(train.started, "20261129T090000Z");
  EXPECT_EQ(train.ended, "20261129T090100Z");
  EXPECT_DOUBLE_EQ(train.seconds, 60.5);
  EXPECT_DOUBLE_EQ(train.total_seconds, 90.25);
  EXPECT_EQ(train.runs, 2);
  EXPECT_EQ(train.exit_code, 75);
  EXPECT_EQ(train.message, "stopped by a signal");
  EXPECT_EQ(read.stage("prepare").status, StageStatus::kPending);
  EXPECT_EQ(Ledger::open(path, kStages).to_json().at("summary").at("table"), "/data/t.csv");
  // The write was atomic: no temporary left beside it.
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    files += entry.is_regular_file();
  EXPECT_EQ(files, 1);
}

TEST(Ledger, StagesFollowTheJobsList) {
  const auto dir = testing::scratch_dir("ledger_stages");
  const std::string path = dir + "/pipeline.json";
  Ledger ledger = Ledger::open(path, {"prepare", "old_stage"});
  ledger.stage("prepare").status = StageStatus::kCompleted;
  ledger.stage("old_stage").status = StageStatus::kCompleted;
  ledger.save();
  const Ledger read = Ledger::open(path, kStages);
  ASSERT_EQ(read.stages().size(), 3u);
  EXPECT_EQ(read.stages()[0].status, StageStatus::kCompleted);
  EXPECT_EQ(read.stages()[1].status, StageStatus::kPending);
  EXPECT_THROW(read.stage("old_stage"), InternalError);
}

void expect_not_a_ledger(const std::string& text, const std::string& why) {
  const auto dir = testing::scratch_dir("ledger_bad");
  const std::string path = dir + "/pipeline.json";
  write(path, text);
  try {
    Ledger::open(path, kStages);
    FAIL() << "read " << text;
  } catch (const DataError& e) {
    EXPECT_EQ(e.code(), ExitCode::kData);
    EXPECT_NE(e.message().find(path), std::string::npos) << e.message();
    EXPECT_NE(e.message().find(why), std::string::npos) << e.message();
    EXPECT_NE(e.hint().find("move it away"), std::string::npos) << e.hint();
  }
}

TEST(Ledger, AFileThatIsNotALedgerIsADataError) {
  expect_not_a_ledger("{\"version\": 1, \"stages\": [", "parse error");
  expect_not_a_ledger("[1, 2]", "");
  expect_not_a_ledger("{\"version\": 2, \"stages\": []}", "version 2");
  expect_not_a_ledger(
      "{\"version\": 1, \"stages\": [{\"name\": \"train\", \"status\": \"done\", \"inputs\": {}, "
      "\"outputs\": {}, \"facts\": {}, \"started\": \"\", \"ended\": \"\", \"seconds\": 0, "
      "\"total_seconds\": 0, \"runs\": 1, \"exit_code\": 0, \"message\": \"\"}]}",
      "unknown stage status 'done'");
  expect_not_a_ledger("{\"version\": 1, \"stages\": [{\"name\": \"train\"}]}", "status");
}

TEST(Ledger, ADirectoryAtItsPathIsADataError) {
  const auto dir = testing::scratch_dir("ledger_dir");
  std::filesystem::create_directory(dir + "/pipeline.json");
  EXPECT_THROW(Ledger::open(dir + "/pipeline.json", kStages), DataError);
}

}  // namespace
}  // namespace nss::pipeline
