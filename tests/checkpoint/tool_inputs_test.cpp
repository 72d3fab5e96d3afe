// What the offline tools refuse, piece by piece: values that are not finite
// (every floating type, found across windows, named), step directories that
// are not committed (what they are and which step to use instead), and an
// output location that cannot take the output (exit 2, nothing left behind).
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

#include "checkpoint/committed_step.h"
#include "checkpoint/step_directory.h"
#include "core/error.h"
#include "core/finite_values.h"
#include "core/half.h"
#include "core/output_file.h"
#include "support/test_paths.h"

namespace nss::checkpoint {
namespace {

namespace fs = std::filesystem;

// The message of the Error `fn` throws, and its exit code.
template <class Fn>
std::pair<ExitCode, std::string> error_of(Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return {e.code(), e.what()};
  }
  return {ExitCode::kOk, ""};
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(FiniteValues, FindsTheFirstNaNOrInfinityOfEveryFloatingType) {
  std::vector<float> f32(10000, 1.5f);
  EXPECT_FALSE(first_non_finite(DType::kFloat32, f32.data(), f32.size()));
  f32[9000] = std::numeric_limits<float>::infinity();  // past the first 4096-element block
  f32[9500] = std::nanf("");
  EXPECT_EQ(first_non_finite(DType::kFloat32, f32.data(), f32.size()), 9000u);

  const std::vector<double> f64 = {0.0, -1e300, -std::numeric_limits<double>::infinity()};
  EXPECT_EQ(first_non_finite(DType::kFloat64, f64.data(), f64.size()), 2u);
  const std::vector<std::uint16_t> bf16 = {float_to_bf16(3.0f), float_to_bf16(std::nanf(""))};
  EXPECT_EQ(first_non_finite(DType::kBFloat16, bf16.data(), bf16.size()), 1u);
  const std::vector<std::uint16_t> f16 = {float_to_f16(65504.0f), float_to_f16(1e6f)};  // inf
  EXPECT_EQ(first_non_finite(DType::kFloat16, f16.data(), f16.size()), 1u);
  // The same bits as integers are just numbers.
  EXPECT_FALSE(first_non_finite(DType::kUInt16, f16.data(), f16.size()));
}

TEST(FiniteValues, ScanNamesTheTensorTheElementAndTheValueOnlyWhenAsked) {
  FiniteScan scan(DType::kFloat32);
  const std::vector<float> good(8, 0.25f);
  std::vector<float> bad(8, 0.25f);
  bad[3] = -std::numeric_limits<float>::infinity();
  bad[5] = std::nanf("");
  scan.scan(good.data(), 0, 8);
  EXPECT_NO_THROW(scan.require("w", "h"));
  scan.scan(bad.data(), 8, 8);  // elements [8, 16) of the tensor
  scan.scan(bad.data(), 16, 8);
  const auto [code, text] = error_of([&] { scan.require("step: tensor 'w'", "use another"); });
  EXPECT_EQ(code, ExitCode::kData);
  EXPECT_TRUE(contains(text, "step: tensor 'w' holds -inf at element 11")) << text;
  EXPECT_TRUE(contains(text, "hint: use another")) << text;
  const auto [nan_code, nan_text] =
      error_of([&] { require_finite(DType::kFloat32, bad.data() + 4, 100, 4, "t", "h"); });
  EXPECT_EQ(nan_code, ExitCode::kData);
  EXPECT_TRUE(contains(nan_text, "t holds nan at element 101")) << nan_text;
}

// A checkpoint directory with committed steps 10 and 20 (latest: 20), a save
// left by a crash (30.tmp, with its metadata.json), a step being pruned
// (5.old), a step without metadata.json (40) and a renamed copy.
class CommittedStepTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::nss::testing::scratch_dir("committed_step");
    for (const char* name :
         {"step_00000010", "step_00000020", "step_00000030.tmp", "step_00000005.old", "best_copy"})
      std::ofstream((make(name) / kMetadata).string()) << "{}";
    make("step_00000040");
    make("step_00000020_hf");
    write_latest(dir_, 20);
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path make(const std::string& name) {
    const fs::path path = fs::path(dir_) / name;
    fs::create_directories(path);
    return path;
  }
  std::string path(const std::string& name) const { return (fs::path(dir_) / name).string(); }

  static constexpr const char* kMetadata = "metadata.json";
  std::string dir_;
};

TEST_F(CommittedStepTest, StepNamesAreToldFromOtherDirectories) {
  for (const char* name :
       {"step_00000010", "step_00000030.tmp", "step_00000005.old", "step_00000040", "best_copy"})
    EXPECT_TRUE(names_a_step(path(name))) << name;
  // An export named after its step is a Hugging Face directory, not a step.
  EXPECT_FALSE(names_a_step(path("step_00000020_hf")));
  EXPECT_FALSE(names_a_step(dir_));
}

TEST_F(CommittedStepTest, OnlyCommittedStepsPassAndTheRefusalNamesTheStepToUse) {
  EXPECT_NO_THROW(require_committed_step(path("step_00000010")));
  EXPECT_NO_THROW(require_committed_step(path("step_00000020") + "/"));
  const std::string use =
      "use the committed step " + path("step_00000020") + " (the one " + path("latest") + " names)";
  for (const auto& [name, what] : std::vector<std::pair<std::string, std::string>>{
           {"step_00000030.tmp", " was never committed: step_00000030.tmp is a save in progress"},
           {"step_00000005.old", " is a step being pruned (step_00000005.old)"},
           {"step_00000040", " has no metadata.json"},
           {"best_copy", " is not a committed step: a committed step's directory is named"}}) {
    const auto [code, text] = error_of([&] { require_committed_step(path(name)); });
    EXPECT_EQ(code, ExitCode::kCheckpoint) << name;
    EXPECT_TRUE(contains(text, path(name) + what)) << text;
    EXPECT_TRUE(contains(text, use)) << text;
  }
}

TEST_F(CommittedStepTest, WithoutLatestTheNewestCommittedStepIsNamed) {
  fs::remove(path("latest"));
  const auto [code, text] = error_of([&] { require_committed_step(path("step_00000030.tmp")); });
  EXPECT_EQ(code, ExitCode::kCheckpoint);
  EXPECT_TRUE(contains(text, "use the newest committed step " + path("step_00000020"))) << text;
  for (const char* name : {"step_00000010", "step_00000020"}) fs::remove_all(path(name));
  const auto [none_code, none] =
      error_of([&] { require_committed_step(path("step_00000030.tmp")); });
  EXPECT_EQ(none_code, ExitCode::kCheckpoint);
  EXPECT_TRUE(contains(none, dir_ + " holds no committed step")) << none;
}

TEST(OutputFile, AnOutputBelowARegularFileIsAUsageErrorNamingTheReason) {
  const std::string dir = ::nss::testing::scratch_dir("output_file");
  std::ofstream(dir + "/file") << "x";
  const auto [code, text] = error_of([&] { OutputFile out({dir + "/file/out.h5"}); });
  EXPECT_EQ(code, ExitCode::kUsage);
  EXPECT_TRUE(contains(text, "cannot create " + dir + "/file/out.h5.tmp.")) << text;
  EXPECT_TRUE(contains(text, ": Not a directory")) << text;
  EXPECT_TRUE(contains(text, "choose another --output")) << text;
  fs::remove_all(dir);
}

TEST(OutputFile, AppearsOnlyOnCommitAndLeavesNothingOtherwise) {
  const std::string dir = ::nss::testing::scratch_dir("output_commit");
  const char bytes[] = "0123456789";
  {
    OutputFile out({dir + "/kept"});
    out.reserve(10);
    out.write_at(0, bytes, 10);
    EXPECT_FALSE(fs::exists(dir + "/kept"));
    out.commit();
  }
  { OutputFile dropped({dir + "/dropped"}); }
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir))
    names.push_back(entry.path().filename().string());
  EXPECT_EQ(names, std::vector<std::string>{"kept"});
  EXPECT_EQ(fs::file_size(dir + "/kept"), 10u);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace nss::checkpoint
