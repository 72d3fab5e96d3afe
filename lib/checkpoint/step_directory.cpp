#include "checkpoint/step_directory.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>

#include "checkpoint/index.h"
#include "core/error.h"
#include "core/fs.h"
#include "core/host_and_time.h"

namespace fs = std::filesystem;

namespace nss::checkpoint {
namespace {

constexpr const char* kStepPrefix = "step_";
constexpr const char* kTmpSuffix = ".tmp";
constexpr const char* kPrunedSuffix = ".old";
constexpr const char* kSetAsideSuffix = ".corrupt-";

bool all_digits(const std::string& text) {
  return !text.empty() &&
         std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c); });
}

}  // namespace

std::string step_dir_name(std::int64_t step) {
  char name[32];
  std::snprintf(name, sizeof name, "step_%08lld", static_cast<long long>(step));
  return name;
}

std::string step_dir_path(const std::string& checkpoint_dir, std::int64_t step) {
  return (fs::path(checkpoint_dir) / step_dir_name(step)).string();
}

std::string step_tmp_path(const std::string& checkpoint_dir, std::int64_t step) {
  return step_dir_path(checkpoint_dir, step) + kTmpSuffix;
}

std::string step_pruned_path(const std::string& checkpoint_dir, std::int64_t step) {
  return step_dir_path(checkpoint_dir, step) + kPrunedSuffix;
}

std::string step_corrupt_path(const std::string& checkpoint_dir, std::int64_t step) {
  return step_dir_path(checkpoint_dir, step) + kSetAsideSuffix + utc_stamp();
}

void check_fresh_start(const std::string& checkpoint_dir) {
  const auto steps = committed_steps(checkpoint_dir);
  if (steps.empty()) return;
  throw CheckpointError(
      "checkpoint",
      "checkpoint.resume is never, but " + checkpoint_dir + " holds " +
          std::to_string(steps.size()) + " committed step" + (steps.size() > 1 ? "s" : "") +
          " (newest " + step_dir_name(steps.front()) +
          "): a fresh run there would collide with them or prune them",
      "start fresh in another checkpoint.dir, move those steps away, or resume from them "
      "(checkpoint.resume: auto, or a step directory)");
}

bool is_step_directory(const std::string& path) {
  std::error_code ec;
  return fs::is_directory(path, ec) && fs::is_regular_file(fs::path(path) / kIndexFile, ec);
}

std::string rank_file_name(int rank) {
  char name[32];
  std::snprintf(name, sizeof name, "rank_%05d.h5", rank);
  return name;
}

std::optional<std::int64_t> parse_step_dir_name(const std::string& name) {
  if (name.rfind(kStepPrefix, 0) != 0) return std::nullopt;
  const std::string digits = name.substr(std::string(kStepPrefix).size());
  if (!all_digits(digits) || digits.size() > 18) return std::nullopt;
  return std::stoll(digits);
}

std::vector<std::int64_t> committed_steps(const std::string& checkpoint_dir) {
  std::vector<std::int64_t> steps;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(checkpoint_dir, ec)) {
    const auto step = parse_step_dir_name(entry.path().filename().string());
    if (step && is_step_directory(entry.path().string())) steps.push_back(*step);
  }
  std::sort(steps.begin(), steps.end(), std::greater<>());
  return steps;
}

std::optional<std::int64_t> read_latest(const std::string& checkpoint_dir) {
  std::ifstream in(fs::path(checkpoint_dir) / kLatestFile);
  std::string name;
  if (!in || !(in >> name)) return std::nullopt;
  return parse_step_dir_name(name);
}

std::optional<StepDirectoryName> classify_step_dir_name(const std::string& name) {
  const auto dot = name.find('.');
  const auto step = parse_step_dir_name(name.substr(0, dot));
  if (!step) return std::nullopt;
  if (dot == std::string::npos) return StepDirectoryName{*step, StepDirectoryState::kCommitted};
  const std::string suffix = name.substr(dot);
  if (suffix == kTmpSuffix) return StepDirectoryName{*step, StepDirectoryState::kInProgress};
  if (suffix == kPrunedSuffix) return StepDirectoryName{*step, StepDirectoryState::kPruned};
  if (suffix.rfind(kSetAsideSuffix, 0) == 0)
    return StepDirectoryName{*step, StepDirectoryState::kSetAside};
  return std::nullopt;
}

void write_latest(const std::string& checkpoint_dir, std::int64_t step) {
  write_file_atomic((fs::path(checkpoint_dir) / kLatestFile).string(), step_dir_name(step) + "\n");
}

std::vector<std::string> leftover_dirs(const std::string& checkpoint_dir) {
  std::vector<std::string> dirs;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(checkpoint_dir, ec)) {
    const auto named = classify_step_dir_name(entry.path().filename().string());
    if (named && entry.is_directory(ec) &&
        (named->state == StepDirectoryState::kInProgress ||
         named->state == StepDirectoryState::kPruned))
      dirs.push_back(entry.path().string());
  }
  std::sort(dirs.begin(), dirs.end());
  return dirs;
}

}  // namespace nss::checkpoint
