// The training state a checkpoint carries: it round-trips through JSON, a
// state written before the version field reads its settings from the stored
// configuration, a missing or mistyped field is a checkpoint error naming it,
// and a resume refuses (exit 5) exactly the differences that matter.
#include "checkpoint/training_state.h"

#include <gtest/gtest.h>

#include "checkpoint/resume_check.h"
#include "config/load.h"
#include "core/error.h"
#include "train/current_training_state.h"

namespace nss::train {
namespace {

using checkpoint::check_resume;
using checkpoint::TrainingProgress;
using checkpoint::TrainingState;

config::Config lora_config() {
  return config::parse_config_text(
      "model: {preset: tiny}\ntraining: {lora: {enabled: true, rank: 4}}\n", "test");
}

TrainingState state_of(const config::Config& config, int world_size = 2) {
  TrainingProgress progress{12, 3072, {1, 40}, 11, 1};
  const nlohmann::json dataset = {{"tokenizer", "byte-level"},
                                  {"format", "records"},
                                  {"prompt_template", "Generate {columns}\n"},
                                  {"records_schema", {{"columns", nlohmann::json::array()}}}};
  return current_training_state(
      config, progress, world_size,
      {lora_base_identity(config), dataset, {"20261124T081500Z-1", "runs/x"}});
}

std::string error_of(const nlohmann::json& json) {
  try {
    (void)json.get<TrainingState>();
  } catch (const CheckpointError& e) {
    return e.message();
  }
  ADD_FAILURE() << "no CheckpointError";
  return "";
}

TEST(TrainingState, RoundTripsThroughJson) {
  const TrainingState written = state_of(lora_config());
  const nlohmann::json json = written;
  EXPECT_EQ(json.at("version"), TrainingState::kVersion);
  EXPECT_EQ(json.at("optimizer").at("applied_updates"), 11);
  EXPECT_EQ(json.at("rng").at("kind"), "counter-based");
  const auto read = json.get<TrainingState>();
  EXPECT_EQ(read.progress.step, 12);
  EXPECT_EQ(read.progress.tokens_seen, 3072);
  EXPECT_EQ(read.progress.data, (data::LoaderPosition{1, 40}));
  EXPECT_EQ(read.progress.skipped_steps, 1);
  EXPECT_EQ(read.model, written.model);
  EXPECT_EQ(read.lora.at("rank"), 4);
  EXPECT_EQ(read.lora_base, written.lora_base);
  EXPECT_EQ(read.dataset.at("prompt_template"), "Generate {columns}\n");
  EXPECT_EQ(read.config, written.config);
  EXPECT_EQ(read.run.id, "20261124T081500Z-1");
  EXPECT_EQ(read.run.output_dir, "runs/x");
  EXPECT_EQ(nlohmann::json(read), json);
  // A step saved before runs had ids belongs to any run.
  nlohmann::json older = json;
  older.erase("run");
  EXPECT_TRUE(older.get<TrainingState>().run.id.empty());
}

TEST(TrainingState, VersionOneReadsItsSettingsFromTheStoredConfiguration) {
  nlohmann::json json = state_of(lora_config());
  const nlohmann::json model = json.at("model"), lora = json.at("lora");
  json.erase("version");
  json.erase("model");
  json.erase("lora");
  const auto read = json.get<TrainingState>();
  EXPECT_EQ(read.version, 1);
  EXPECT_EQ(read.model, model);
  EXPECT_EQ(read.lora, lora);
}

TEST(TrainingState, AMissingOrMistypedFieldIsNamed) {
  nlohmann::json json = state_of(lora_config());
  json.at("data").erase("cursor");
  EXPECT_NE(error_of(json).find("lacks the field: data.cursor"), std::string::npos);
  json = state_of(lora_config());
  json["tokens_seen"] = "many";
  EXPECT_NE(error_of(json).find("wrong type (\"many\"): tokens_seen"), std::string::npos);
  json = state_of(lora_config());
  json.erase("model");
  EXPECT_NE(error_of(json).find("lacks the field: model"), std::string::npos);
  json = state_of(lora_config());
  json["version"] = TrainingState::kVersion + 1;
  EXPECT_NE(error_of(json).find("version"), std::string::npos);
}

TEST(TrainingState, ResumeRefusesAnotherShapeOrAdapterAndReportsOtherData) {
  const config::Config config = lora_config();
  const TrainingState saved = state_of(config);
  EXPECT_TRUE(check_resume(saved, state_of(config, 4), "step_12").empty());  // world size is free

  config::Config wider = config;
  wider.model.hidden_size = 128;
  wider.training.lora.rank = 8;
  try {
    check_resume(saved, state_of(wider), "step_12");
    FAIL() << "another shape was accepted";
  } catch (const CheckpointError& e) {
    EXPECT_NE(e.message().find("model.hidden_size: checkpoint 64, this run 128"), std::string::npos)
        << e.message();
    EXPECT_NE(e.message().find("training.lora.rank: checkpoint 4, this run 8"), std::string::npos);
    EXPECT_NE(e.hint().find("start fresh in another checkpoint.dir"), std::string::npos);
  }

  config::Config qwen3 = config;  // another family
  qwen3.model.family = "qwen3";
  try {
    check_resume(saved, state_of(qwen3), "step_12");
    FAIL() << "another family was accepted";
  } catch (const CheckpointError& e) {
    EXPECT_NE(e.message().find("model.family: checkpoint \"llama\", this run \"qwen3\""),
              std::string::npos)
        << e.message();
  }

  config::Config reseeded = config;  // a random LoRA base is its seed
  reseeded.run.seed = 99;
  try {
    check_resume(saved, state_of(reseeded), "step_12");
    FAIL() << "another base was accepted";
  } catch (const CheckpointError& e) {
    EXPECT_NE(e.message().find("was trained on base model"), std::string::npos) << e.message();
  }

  config::Config longer = config;
  longer.data.seq_len *= 2;
  longer.training.lora.dropout = 0.1;  // a training choice, not the adapters
  const auto reported = check_resume(saved, state_of(longer), "step_12");
  ASSERT_EQ(reported.size(), 1u);
  EXPECT_NE(reported[0].find("data.seq_len"), std::string::npos) << reported[0];
}

}  // namespace
}  // namespace nss::train
