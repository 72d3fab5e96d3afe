#include "checkpoint/committed_step.h"

#include <algorithm>
#include <filesystem>

#include "checkpoint/index.h"
#include "checkpoint/step_directory.h"
#include "core/error.h"

namespace fs = std::filesystem;

namespace nss::checkpoint {
namespace {

// The directory itself, also when the path ends in a separator ("step_1/").
fs::path directory_of(const std::string& path) {
  fs::path dir = fs::path(path).lexically_normal();
  return dir.filename().empty() ? dir.parent_path() : dir;
}

// Which committed step of `checkpoint_dir` to use instead.
std::string committed_alternative(const fs::path& checkpoint_dir) {
  const std::string dir = checkpoint_dir.empty() ? "." : checkpoint_dir.string();
  const auto steps = committed_steps(dir);
  const auto latest = read_latest(dir);
  if (latest && std::find(steps.begin(), steps.end(), *latest) != steps.end())
    return "use the committed step " + step_dir_path(dir, *latest) + " (the one " +
           (fs::path(dir) / kLatestFile).string() + " names)";
  if (!steps.empty()) return "use the newest committed step " + step_dir_path(dir, steps.front());
  return dir + " holds no committed step: let the training commit one (checkpoint.interval_steps)";
}

}  // namespace

bool names_a_step(const std::string& path) {
  std::error_code ec;
  return classify_step_dir_name(directory_of(path).filename().string()).has_value() ||
         fs::is_regular_file(fs::path(path) / kIndexFile, ec);
}

void require_committed_step(const std::string& path) {
  const fs::path dir = directory_of(path);
  const std::string name = dir.filename().string();
  const auto named = classify_step_dir_name(name);
  using State = StepDirectoryState;
  if (named && named->state == State::kCommitted && is_step_directory(path)) return;
  std::string what =
      path +
      " is not a committed step: a committed step's directory is named step_NNNNNNNN, "
      "without a suffix (a copy keeps the name)";
  if (named && named->state == State::kCommitted)
    what = path +
           " has no metadata.json, so it is not a committed step (a commit writes it "
           "before the directory gets its name: it was removed since)";
  else if (named && named->state == State::kInProgress)
    what = path + " was never committed: " + name +
           " is a save in progress, or one a crash interrupted, and its files may be incomplete";
  else if (named && named->state == State::kSetAside)
    what = path + " was set aside as damaged by a resume (" + name +
           "): it is kept for inspection with nss_ckpt verify, never used";
  else if (named && named->state == State::kPruned)
    what = path + " is a step being pruned (" + name +
           "): a later save was removing it and its files may be partly deleted";
  throw CheckpointError("checkpoint", what, committed_alternative(dir.parent_path()));
}

}  // namespace nss::checkpoint
