#include "checkpoint/commit.h"

#include <cerrno>
#include <cstdio>
#include <filesystem>

#include <spdlog/spdlog.h>

#include "checkpoint/step_directory.h"
#include "core/error.h"
#include "core/fs.h"

namespace fs = std::filesystem;

namespace nss::checkpoint {
namespace {

const char* kSpaceHint = "check free space, quotas and permissions of checkpoint.dir";

void rename_or_throw(const std::string& from, const std::string& to) {
  if (std::rename(from.c_str(), to.c_str()) != 0)
    throw CheckpointError(
        "checkpoint", "cannot rename " + from + " to " + to + ": " + errno_text(errno), kSpaceHint);
}

void remove_tree_or_warn(const std::string& path) {
  const std::string failure = remove_tree(path);
  if (!failure.empty()) spdlog::warn("[checkpoint] {}", failure);
}

}  // namespace

void prepare_step_directory(const std::string& checkpoint_dir, std::int64_t step) {
  std::error_code ec;
  fs::create_directories(checkpoint_dir, ec);
  if (ec)
    throw CheckpointError(
        "checkpoint", "cannot create checkpoint directory " + checkpoint_dir + ": " + ec.message(),
        kSpaceHint);
  const std::string final_dir = step_dir_path(checkpoint_dir, step);
  if (fs::exists(final_dir, ec))
    throw CheckpointError("checkpoint",
                          final_dir + " already exists; a committed step is never overwritten",
                          "this run resumed from an older step because that one could not be "
                          "read then (nss_ckpt verify checks it), or it belongs to an earlier "
                          "run: move it away or use another checkpoint.dir");
  for (const auto& leftover : leftover_dirs(checkpoint_dir)) {
    spdlog::info("[checkpoint] removing {} (left by an interrupted save or prune)", leftover);
    remove_tree_or_warn(leftover);
  }
  const std::string tmp_dir = step_tmp_path(checkpoint_dir, step);
  if (!fs::create_directory(tmp_dir, ec) || ec)
    throw CheckpointError(
        "checkpoint",
        "cannot create " + tmp_dir + ": " + (ec ? ec.message() : std::string("it already exists")),
        kSpaceHint);
}

void commit_step(const std::string& checkpoint_dir, const CheckpointIndex& index,
                 std::int64_t keep_last) {
  const std::string final_dir = step_dir_path(checkpoint_dir, index.step);
  const std::string tmp_dir = step_tmp_path(checkpoint_dir, index.step);
  const auto problems = coverage_problems(index);
  if (!problems.empty())
    throw CheckpointError(
        "checkpoint",
        "the ranks' pieces do not cover every tensor exactly once: " + problems.front() +
            (problems.size() > 1 ? " (and " + std::to_string(problems.size() - 1) + " more)" : ""),
        "the shard layout passed to save is incomplete (a caller bug)");
  try {
    // A step with a secret section is readable by its owner alone.
    write_file_atomic((fs::path(tmp_dir) / kIndexFile).string(), index_to_text(index),
                      index.secrets.empty() ? 0644 : 0600);
  } catch (const Error& e) {
    throw CheckpointError("checkpoint", e.message(), kSpaceHint);
  }
  rename_or_throw(tmp_dir, final_dir);
  try {
    fsync_directory(checkpoint_dir);
  } catch (const Error& e) {
    // The rename happened; only its durability across a power loss is in doubt.
    spdlog::warn("[checkpoint] {}", e.message());
  }
  try {
    write_latest(checkpoint_dir, index.step);
  } catch (const Error& e) {
    spdlog::warn("[checkpoint] step {} is committed but 'latest' was not updated: {}", index.step,
                 e.message());
  }
  prune_steps(checkpoint_dir, keep_last, index.step);
}

void discard_step_directory(const std::string& tmp_dir) {
  std::error_code ec;
  if (fs::exists(tmp_dir, ec)) remove_tree_or_warn(tmp_dir);
}

std::string set_aside_damaged_step(const std::string& checkpoint_dir, std::int64_t step,
                                   std::int64_t loaded) {
  const std::string aside = step_corrupt_path(checkpoint_dir, step);
  rename_or_throw(step_dir_path(checkpoint_dir, step), aside);
  fsync_directory(checkpoint_dir);
  write_latest(checkpoint_dir, loaded);
  return aside;
}

void prune_steps(const std::string& checkpoint_dir, std::int64_t keep_last, std::int64_t protect) {
  if (keep_last <= 0) return;
  const auto steps = committed_steps(checkpoint_dir);  // newest first
  for (std::size_t i = static_cast<std::size_t>(keep_last); i < steps.size(); ++i) {
    if (steps[i] == protect) continue;
    const std::string dir = step_dir_path(checkpoint_dir, steps[i]);
    const std::string doomed = step_pruned_path(checkpoint_dir, steps[i]);
    if (std::rename(dir.c_str(), doomed.c_str()) != 0) {
      spdlog::warn("[checkpoint] cannot prune {}: {}", dir, errno_text(errno));
      continue;
    }
    remove_tree_or_warn(doomed);
    spdlog::info("[checkpoint] pruned {} (checkpoint.keep_last = {})", dir, keep_last);
  }
}

}  // namespace nss::checkpoint
