// Components that save their own state: a registered component's section is
// saved with every step and handed back at a resume (nothing on a fresh
// start, null from a step saved without it); a secret section makes
// metadata.json readable by its owner alone and never reaches an export or a
// report; a section a resume must match refuses a step that differs; and the
// committed fixture steps read and write back byte for byte.
#include "checkpoint/stateful_component.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/stat.h>

#include <gtest/gtest.h>

#include "checkpoint/component_registry.h"
#include "checkpoint/consolidate.h"
#include "checkpoint/index.h"
#include "checkpoint/inspect.h"
#include "checkpoint/load.h"
#include "checkpoint/save.h"
#include "checkpoint/trained_model.h"
#include "checkpoint/training_state.h"
#include "comm/local_communicator.h"
#include "core/error.h"
#include "support/test_paths.h"
#include "synthetic_state.h"

namespace nss::checkpoint {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Remembers what it was handed; saves `value` under `name`.
class RecordingComponent final : public StatefulComponent {
 public:
  RecordingComponent(std::string name, json value, bool secret = false,
                     const char* mismatch = nullptr)
      : name_(std::move(name)), value_(std::move(value)), secret_(secret), mismatch_(mismatch) {}

  std::string name() const override { return name_; }
  bool secret() const override { return secret_; }
  json state() const override { return value_; }
  void load(const std::optional<json>& saved) override {
    ++loads;
    loaded = saved;
  }
  const char* resume_mismatch() const override { return mismatch_; }

  int loads = 0;
  std::optional<json> loaded;

 private:
  std::string name_;
  json value_;
  bool secret_;
  const char* mismatch_;
};

struct Fixture {
  std::string dir = testing::scratch_dir("stateful");
  comm::LocalCommunicator comm{1};
  testing::SyntheticModel model = testing::synthetic_model();

  // Saves step `step` with `registry`'s sections; returns its directory.
  std::string save(std::int64_t step, const ComponentRegistry& registry) {
    SaveRequest request;
    request.checkpoint_dir = dir;
    request.step = step;
    request.tensors = model.tensors;
    request.state = {{"step", step}, {"tokens_seen", step * 10}};
    request.keep_last = 0;
    registry.add_sections(request);
    testing::RankState state = testing::make_rank_state(model, 0, 1);
    testing::fill_rank_state(state, step);
    return save_checkpoint(comm, request, state.buffers).step_dir;
  }
  LoadResult load(const std::string& step_dir) {
    testing::RankState state = testing::make_rank_state(model, 0, 1);
    return load_checkpoint(comm, step_dir, model.tensors, state.buffers, LoadOptions{});
  }
  ~Fixture() { fs::remove_all(dir); }
};

std::string file_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

unsigned permissions(const std::string& path) {
  struct stat info {};
  EXPECT_EQ(::stat(path.c_str(), &info), 0) << path;
  return info.st_mode & 0777;
}

TEST(StatefulComponents, ARegisteredComponentIsSavedAndResumed) {
  Fixture f;
  RecordingComponent saving("sampler", {{"seen", 42}});
  ComponentRegistry registry;
  registry.add(saving);
  const std::string step_dir = f.save(3, registry);
  EXPECT_EQ(read_index(step_dir).state.at("sampler"), (json{{"seen", 42}}));
  EXPECT_EQ(permissions(step_dir + "/metadata.json"), 0644u);

  RecordingComponent resuming("sampler", nullptr);
  ComponentRegistry resumed;
  resumed.add(resuming);
  resumed.load(f.load(step_dir));
  EXPECT_EQ(resuming.loads, 1);
  ASSERT_TRUE(resuming.loaded.has_value());
  EXPECT_EQ(*resuming.loaded, (json{{"seen", 42}}));
}

TEST(StatefulComponents, AFreshStartGivesNothingAndAnOlderStepNull) {
  Fixture f;
  RecordingComponent component("sampler", {{"seen", 1}});
  ComponentRegistry registry;
  registry.add(component);
  registry.load(std::nullopt);
  EXPECT_EQ(component.loads, 1);
  EXPECT_FALSE(component.loaded.has_value());

  const std::string older = f.save(2, ComponentRegistry{});  // saved before the component existed
  registry.load(f.load(older));
  EXPECT_EQ(component.loads, 2);
  ASSERT_TRUE(component.loaded.has_value());
  EXPECT_TRUE(component.loaded->is_null());
}

TEST(StatefulComponents, ANullSectionIsLeftOutAndNamesAreUnique) {
  Fixture f;
  RecordingComponent empty("nothing", nullptr), twin("nothing", 1);
  ComponentRegistry registry;
  registry.add(empty);
  EXPECT_THROW(registry.add(twin), InternalError);
  const CheckpointIndex index = read_index(f.save(4, registry));
  EXPECT_FALSE(index.state.contains("nothing"));
  EXPECT_TRUE(index.secrets.empty());

  RecordingComponent clash("tokens_seen", 7);  // a field of the training state
  ComponentRegistry clashing;
  clashing.add(clash);
  SaveRequest request;
  request.state = {{"tokens_seen", 1}};
  EXPECT_THROW(clashing.add_sections(request), InternalError);
}

TEST(StatefulComponents, ASecretSectionIsOwnerOnlyAndNeverExported) {
  Fixture f;
  const std::string secret = "5ec7e7c0ffee5ec7e7c0ffee5ec7e7c0ffee";
  RecordingComponent key("test_key", secret, /*secret=*/true);
  RecordingComponent plan("test_plan", {{"sigma", 0.5}});
  ComponentRegistry registry;
  registry.add(key);
  registry.add(plan);
  const std::string step_dir = f.save(5, registry);
  const CheckpointIndex index = read_index(step_dir);
  EXPECT_EQ(index.secrets.at("test_key"), secret);
  EXPECT_FALSE(index.state.contains("test_key"));
  EXPECT_EQ(permissions(step_dir + "/metadata.json"), 0600u);

  RecordingComponent resuming("test_key", nullptr, /*secret=*/true);
  ComponentRegistry resumed;
  resumed.add(resuming);
  resumed.load(f.load(step_dir));
  EXPECT_EQ(resuming.loaded.value(), secret);

  ConsolidateOptions options;
  options.step_dir = step_dir;
  options.output = f.dir + "/export.h5";
  consolidate(options);
  EXPECT_EQ(file_text(options.output).find(secret), std::string::npos);
  EXPECT_NE(file_text(options.output).find("test_plan"), std::string::npos);
  EXPECT_EQ(describe_checkpoint(step_dir).find(secret), std::string::npos);
}

// A state whose own fields agree with any other such state.
TrainingState plain_state() {
  TrainingState state;
  state.model = state.lora = json::object();
  return state;
}

TEST(StatefulComponents, ASectionAResumeMustMatchIsCompared) {
  RecordingComponent plan("test_plan", {{"sigma", 0.5}}, false, "other test settings");
  RecordingComponent free("sampler", {{"seen", 1}});
  ComponentRegistry registry;
  registry.add(plan);
  registry.add(free);
  const json saved = {{"test_plan", {{"sigma", 0.7}}}, {"sampler", {{"seen", 9}}}};
  const auto comparisons = registry.comparisons(saved);
  ASSERT_EQ(comparisons.size(), 1u);
  EXPECT_EQ(comparisons[0].name, "test_plan");
  EXPECT_EQ(comparisons[0].saved, (json{{"sigma", 0.7}}));
  EXPECT_EQ(comparisons[0].current, (json{{"sigma", 0.5}}));
  try {
    check_resume(plain_state(), plain_state(), "step_3", comparisons);
    FAIL() << "a differing section was accepted";
  } catch (const CheckpointError& e) {
    EXPECT_NE(
        e.message().find("other test settings: test_plan.sigma: checkpoint 0.7, this run 0.5"),
        std::string::npos)
        << e.message();
  }
  EXPECT_TRUE(check_resume(plain_state(), plain_state(), "step_3",
                           registry.comparisons({{"test_plan", {{"sigma", 0.5}}}}))
                  .empty());
}

// The steps an earlier build committed: today's index writer gives back their
// metadata.json byte for byte, and the training state plus the components'
// sections (a private run's plan and key) are exactly what they hold.
TEST(StatefulComponents, TheFixtureStepsWriteBackByteForByte) {
  int steps = 0;
  for (const auto& fixture : fs::directory_iterator(testing::source_dir() + "/tests/fixtures")) {
    if (fixture.path().filename().string().rfind("formats_", 0) != 0) continue;
    for (const auto& run : fs::directory_iterator(fixture.path() / "runs"))
      for (const auto& step : fs::directory_iterator(run.path() / "checkpoints")) {
        if (!step.is_directory()) continue;
        ++steps;
        const std::string path = (step.path() / kIndexFile).string();
        const std::string text = file_text(path);
        const CheckpointIndex index = parse_index(text, path);
        EXPECT_EQ(index_to_text(index), text) << path;

        RecordingComponent plan("privacy", privacy_settings(index));
        RecordingComponent key("privacy_key", find_section(index.secrets, "privacy_key"), true);
        ComponentRegistry registry;
        registry.add(plan);
        registry.add(key);
        SaveRequest request;
        request.state = index.state.get<TrainingState>();
        registry.add_sections(request);
        EXPECT_EQ(request.state, index.state) << path;
        EXPECT_EQ(request.secrets, index.secrets) << path;
      }
  }
  EXPECT_GE(steps, 2);
}

}  // namespace
}  // namespace nss::checkpoint
