#include "preflight/checkpoint_checks.h"

#include <algorithm>
#include <filesystem>

#include "checkpoint/committed_step.h"
#include "checkpoint/index.h"
#include "checkpoint/step_directory.h"
#include "checkpoint/verify.h"
#include "config/derived.h"
#include "core/units.h"
#include "layout/sharded_state_layout.h"
#include "model/unit_layouts.h"

namespace nss::preflight {
namespace {

// Beside the data, a rank file holds its datasets' HDF5 headers and
// metadata.json one entry per chunk: a few KiB per rank at the test shapes.
constexpr std::uint64_t kRankFileOverheadBytes = 64u << 10;

// How many checkpoints exist at once during a save: the ones kept plus the
// one being written, or every save of the run when all are kept.
std::int64_t checkpoints_held_at_once(const config::Config& config) {
  const auto& k = config.checkpoint;
  const std::int64_t steps = config.training.max_steps;
  const std::int64_t saves = (k.interval_steps > 0 ? (steps - 1) / k.interval_steps : 0) + 1;
  return k.keep_last > 0 ? std::min(saves, k.keep_last + 1) : saves;
}

// "step_00000012 (saved by 2 ranks)", or why the step cannot be resumed from.
std::string describe_step(const std::string& step_dir) {
  const checkpoint::CheckpointIndex index = checkpoint::parse_index(
      checkpoint::read_checked_index_text(step_dir), step_dir + "/metadata.json");
  return step_dir + " (step " + std::to_string(index.step) + ", saved by " +
         std::to_string(index.world_size) + " ranks)";
}

}  // namespace

std::uint64_t predicted_checkpoint_bytes(const config::Config& config, int world_size) {
  // Every shard has the same (padded) size and is written once: by its rank,
  // or under hybrid sharding 1/R of it by each of its R replicas.
  const auto per_shard = static_cast<std::uint64_t>(
      layout::ShardedStateLayout(model::unit_layouts(config, world_size), 0).saved_bytes());
  const auto shards =
      static_cast<std::uint64_t>(config::shard_group_ranks(config.parallel, world_size));
  return shards * per_shard + static_cast<std::uint64_t>(world_size) * kRankFileOverheadBytes;
}

Check check_checkpoint_directory(const PreflightContext& context) {
  const std::string& dir = context.config.checkpoint.dir;
  const RankFacts* first_failure = nullptr;
  int failures = 0;
  double slowest = 0;
  for (const auto& facts : context.ranks) {
    if (!facts.checkpoint_dir)
      return Check::fail("checkpoint.directory", ExitCode::kInternal,
                         rank_label(facts) + " did not report on checkpoint.dir",
                         "this is a bug in nss_hpc; please report it with the log");
    slowest = std::max(slowest, facts.checkpoint_dir->seconds);
    if (!facts.checkpoint_dir->writable && ++failures == 1) first_failure = &facts;
  }
  if (first_failure) {
    std::string message = rank_label(*first_failure) + ": checkpoint.dir " + dir + " " +
                          first_failure->checkpoint_dir->problem;
    if (failures > 1)
      message += " (and on " + std::to_string(failures - 1) + " more rank" +
                 (failures > 2 ? "s" : "") + ")";
    return Check::fail("checkpoint.directory", ExitCode::kCheckpoint, message,
                       "point checkpoint.dir at a writable directory on a file system every rank "
                       "shares (not a file, not read-only, within quota)")
        .with_numbers(std::nullopt, slowest, context.config.preflight.first_batch_timeout_s, "s");
  }
  return Check::pass("checkpoint.directory", ExitCode::kCheckpoint,
                     "checkpoint.dir " + dir + " is writable on all " +
                         std::to_string(context.ranks.size()) + " ranks")
      .with_numbers(std::nullopt, slowest, context.config.preflight.first_batch_timeout_s, "s");
}

Check check_checkpoint_space(const PreflightContext& context) {
  const char* id = "checkpoint.space";
  std::optional<std::uint64_t> least_free;
  const RankFacts* tightest = nullptr;
  for (const auto& facts : context.ranks) {
    if (!facts.checkpoint_dir || !facts.checkpoint_dir->free_bytes) continue;
    if (!least_free || *facts.checkpoint_dir->free_bytes < *least_free) {
      least_free = facts.checkpoint_dir->free_bytes;
      tightest = &facts;
    }
  }
  if (!least_free)
    return Check::skipped(id, ExitCode::kResources,
                          "no rank could read the free space of checkpoint.dir (see "
                          "checkpoint.directory)");
  const std::uint64_t one = predicted_checkpoint_bytes(context.config, context.world_size);
  const std::int64_t held = checkpoints_held_at_once(context.config);
  const double all = static_cast<double>(one) * static_cast<double>(held);
  const std::string where = "checkpoint.dir " + context.config.checkpoint.dir + " has " +
                            format_bytes(*least_free) + " free (" + rank_label(*tightest) + ")";
  if (*least_free < one)
    return Check::fail(id, ExitCode::kResources,
                       where + ", one checkpoint of this job needs " + format_bytes(one),
                       "free space or point checkpoint.dir at a larger file system; a checkpoint "
                       "holds 12 bytes per trainable parameter (fp32 master and two AdamW moments)")
        .with_numbers(static_cast<double>(one), static_cast<double>(*least_free),
                      static_cast<double>(one), "bytes");
  if (static_cast<double>(*least_free) < all)
    return Check::warn(id, ExitCode::kResources,
                       where + ": room for one checkpoint of " + format_bytes(one) +
                           " but not the " + std::to_string(held) + " the run holds at once (" +
                           format_bytes(all) + ")",
                       "free space, lower checkpoint.keep_last, or raise "
                       "checkpoint.interval_steps; a save that finds the disk full fails (the "
                       "final save with exit 5)")
        .with_numbers(all, static_cast<double>(*least_free), all, "bytes");
  return Check::pass(id, ExitCode::kResources,
                     where + ", enough for the " + std::to_string(held) + " checkpoint" +
                         (held > 1 ? "s" : "") + " of " + format_bytes(one) +
                         " the run holds at once")
      .with_numbers(all, static_cast<double>(*least_free), all, "bytes");
}

Check check_checkpoint_resume(const PreflightContext& context) {
  const char* id = "checkpoint.resume";
  const auto& k = context.config.checkpoint;
  if (k.resume.never()) {
    try {
      checkpoint::check_fresh_start(k.dir);
    } catch (const Error& e) {
      return Check::fail(id, ExitCode::kCheckpoint, e.message(), e.hint());
    }
    return Check::pass(id, ExitCode::kCheckpoint,
                       "checkpoint.resume: never: the run starts at step 1");
  }
  const bool automatic = k.resume.automatic();
  const std::string dir = automatic ? k.dir : k.resume.path();
  std::error_code ec;
  if (!automatic && !std::filesystem::exists(dir, ec))
    return Check::fail(id, ExitCode::kCheckpoint, "checkpoint.resume: " + dir + " does not exist",
                       "give a committed step directory (step_N with metadata.json), a checkpoint "
                       "directory, auto or never");
  if (!automatic && checkpoint::names_a_step(dir)) {
    try {
      checkpoint::require_committed_step(dir);
    } catch (const Error& e) {
      return Check::fail(id, ExitCode::kCheckpoint, "checkpoint.resume: " + e.message(), e.hint());
    }
    try {
      return Check::pass(id, ExitCode::kCheckpoint, "resumes from " + describe_step(dir));
    } catch (const Error& e) {
      return Check::fail(id, ExitCode::kCheckpoint,
                         "checkpoint.resume: " + dir + " cannot be resumed from: " + e.message(),
                         "point checkpoint.resume at another step (nss_ckpt verify STEP_DIR "
                         "checks one), or start fresh with checkpoint.resume: never");
    }
  }
  if (!automatic && !std::filesystem::is_directory(dir, ec))
    return Check::fail(id, ExitCode::kCheckpoint,
                       "checkpoint.resume: " + dir + " is not a directory",
                       "give a committed step directory, a checkpoint directory, auto or never");
  const auto steps = checkpoint::committed_steps(dir);
  if (steps.empty())
    return Check::pass(id, ExitCode::kCheckpoint,
                       "no committed step in " + dir + ": the run starts at step 1");
  const std::string newest = checkpoint::step_dir_path(dir, steps.front());
  try {
    return Check::pass(id, ExitCode::kCheckpoint,
                       "resumes from the newest committed step " + describe_step(newest) +
                           " unless its checksums fail (then from an older one)");
  } catch (const Error& e) {
    return Check::warn(id, ExitCode::kCheckpoint,
                       "the newest committed step is damaged: " + e.message() +
                           "; the run will fall back to an older step (" +
                           std::to_string(steps.size() - 1) + " more)",
                       "nss_ckpt verify " + newest + " says what is wrong");
  }
}

}  // namespace nss::preflight
