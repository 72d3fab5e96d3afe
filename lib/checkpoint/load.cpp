#include "checkpoint/load.h"

#include <chrono>
#include <filesystem>
#include <map>

#include <spdlog/spdlog.h>

#include "checkpoint/checkpoint_reader.h"
#include "checkpoint/committed_step.h"
#include "checkpoint/damage.h"
#include "checkpoint/index.h"
#include "checkpoint/step_directory.h"
#include "checkpoint/verify.h"
#include "comm/agreement.h"
#include "core/error.h"
#include "core/units.h"
#include "layout/sharded_state_layout.h"

namespace fs = std::filesystem;

namespace nss::checkpoint {
namespace {

// `work` on every rank (on `root` only when root >= 0), failing on every rank
// like comm::run_on_all / run_on_root — as DamagedStep when each rank that
// failed found damage rather than an error that may be transient.
void run_judging_damage(comm::Communicator& comm, int root, const std::function<void()>& work) {
  std::int32_t other_failure = 0;
  const auto judged = [&] {
    try {
      work();
    } catch (const CheckpointDamage&) {
      throw;
    } catch (...) {
      other_failure = 1;
      throw;
    }
  };
  try {
    if (root >= 0)
      comm::run_on_root(comm, root, judged);
    else
      comm::run_on_all(comm, judged);
  } catch (const comm::AgreedError& e) {
    comm.all_reduce(&other_failure, 1, comm::ReduceOp::kMax);
    if (other_failure == 0 && e.code() == ExitCode::kCheckpoint) throw DamagedStep(e);
    throw;
  }
}

// A tensor this run needs that the step lacks or holds in another shape: the
// step belongs to another configuration, not damage (an older step of the
// same run would not suit either).
std::optional<Refusal> target_mismatch(const CheckpointIndex& index,
                                       const std::vector<TensorSpec>& tensors,
                                       const std::string& step_dir, bool load_optimizer) {
  const char* start_fresh = "start fresh in another checkpoint.dir (or move its steps away)";
  for (const auto& t : tensors) {
    if (layout::is_optimizer_state(t.name) && !load_optimizer) continue;
    const auto it = index.tensors.find(t.name);
    if (it == index.tensors.end())
      return Refusal{
          step_dir + " has no tensor " + t.name +
              ": it was written for another model "
              "or configuration",
          layout::is_optimizer_state(t.name)
              ? std::string("set checkpoint.load_optimizer: false to load the model only")
              : std::string("resume with the configuration it was saved with "
                            "(metadata.json state.config), or ") +
                    start_fresh};
    if (it->second.shape != t.shape || it->second.dtype != t.dtype)
      return Refusal{step_dir + ": tensor " + t.name + " is " + shape_text(it->second.shape) + " " +
                         dtype_name(it->second.dtype) + ", this run expects " +
                         shape_text(t.shape) + " " + dtype_name(t.dtype) +
                         ": it was written for another model shape",
                     std::string("resume with the model.* it was saved with (metadata.json "
                                 "state.config), or ") +
                         start_fresh};
  }
  return std::nullopt;
}

}  // namespace

LoadResult load_checkpoint(comm::Communicator& comm, const std::string& step_dir,
                           const std::vector<TensorSpec>& tensors,
                           const std::vector<ShardBuffer>& buffers, const LoadOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  comm::CollectiveLabel label(comm, "checkpoint load " + step_dir);
  comm::run_on_all(comm, [&] { validate_layout(tensors, buffers); });
  std::string text;
  run_judging_damage(comm, 0, [&] { text = read_checked_index_text(step_dir); });
  comm::broadcast_text(comm, text, 0);
  std::string refusal;  // JSON [message, hint] from rank 0, empty when accepted
  run_judging_damage(comm, 0, [&] {
    const CheckpointIndex index = parse_index(text, step_dir + "/" + kIndexFile);
    // The saved state names a configuration difference best; the tensors
    // catch what it does not record.
    std::optional<Refusal> verdict;
    if (options.accept_state) verdict = options.accept_state(index.state, step_dir);
    if (!verdict) verdict = target_mismatch(index, tensors, step_dir, options.load_optimizer);
    if (verdict) refusal = nlohmann::json{verdict->message, verdict->hint}.dump();
  });
  comm::broadcast_text(comm, refusal, 0);
  if (!refusal.empty()) {
    const auto parts = nlohmann::json::parse(refusal);
    throw IncompatibleCheckpoint({parts[0].get<std::string>(), parts[1].get<std::string>()});
  }

  LoadResult result;
  result.step_dir = step_dir;
  run_judging_damage(comm, -1, [&] {
    CheckpointReader reader(step_dir, parse_index(text, step_dir + "/" + kIndexFile),
                            options.file_locking);
    for (const auto& buffer : buffers) {
      char* base = static_cast<char*>(buffer.data);
      for (const auto& piece : buffer.pieces) {
        if (layout::is_optimizer_state(piece.tensor) && !options.load_optimizer) continue;
        reader.read(piece.tensor, piece.tensor_offset, piece.length,
                    base + piece.buffer_offset * dtype_size(buffer.dtype),
                    {piece.view_blocks, piece.view_block});
      }
    }
    result.step = reader.index().step;
    result.saved_world_size = reader.index().world_size;
    result.state = reader.index().state;
    result.secrets = reader.index().secrets;
    result.bytes_read = reader.bytes_read();
  });
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  spdlog::info(
      "[checkpoint] loaded step {} from {} (saved by {} ranks, loaded by {}): {} in "
      "{:.2f} s on this rank",
      result.step, step_dir, result.saved_world_size, comm.size(), format_bytes(result.bytes_read),
      result.seconds);
  return result;
}

std::optional<LoadResult> resume_checkpoint(comm::Communicator& comm,
                                            const std::string& checkpoint_dir,
                                            const config::ResumeSetting& resume,
                                            const std::vector<TensorSpec>& tensors,
                                            const std::vector<ShardBuffer>& buffers,
                                            const LoadOptions& options) {
  if (resume.never()) return std::nullopt;
  const std::string dir = resume.automatic() ? checkpoint_dir : resume.path();
  if (!resume.automatic()) {
    // A step directory, or else a checkpoint directory.
    std::int32_t step_dir = 0;
    comm::run_on_root(comm, 0, [&] {
      if (!names_a_step(dir)) return;
      require_committed_step(dir);
      step_dir = 1;
    });
    comm.broadcast(&step_dir, 1, 0);
    if (step_dir) return load_checkpoint(comm, dir, tensors, buffers, options);
  }

  // Rank 0 lists the candidates so that every rank tries the same ones in order.
  std::string listing;
  comm::run_on_root(comm, 0, [&] {
    if (!resume.automatic() && !fs::is_directory(dir))
      throw CheckpointError("checkpoint", "checkpoint.resume: " + dir + " does not exist",
                            "give a step directory (with metadata.json), a checkpoint directory, "
                            "auto or never");
    const auto steps = committed_steps(dir);
    const auto latest = read_latest(dir);
    if (!steps.empty() && latest && *latest != steps.front())
      spdlog::warn(
          "[checkpoint] {}/latest names {}, but {} is the newest committed step; using "
          "the newest",
          dir, step_dir_name(*latest), step_dir_name(steps.front()));
    nlohmann::json list = steps;
    listing = list.dump();
  });
  comm::broadcast_text(comm, listing, 0);
  const auto steps = nlohmann::json::parse(listing).get<std::vector<std::int64_t>>();
  if (steps.empty()) {
    if (comm.rank() == 0) spdlog::info("[checkpoint] no committed step in {}; starting fresh", dir);
    return std::nullopt;
  }

  std::vector<std::string> rejected;
  std::vector<std::int64_t> damaged;
  for (const auto step : steps) {
    const std::string step_dir = step_dir_path(dir, step);
    try {
      LoadResult result = load_checkpoint(comm, step_dir, tensors, buffers, options);
      result.rejected_steps = rejected;
      result.damaged_steps = damaged;
      return result;
    } catch (const IncompatibleCheckpoint&) {
      throw;
    } catch (const comm::AgreedError& e) {
      if (dynamic_cast<const DamagedStep*>(&e)) damaged.push_back(step);
      if (e.code() != ExitCode::kCheckpoint) throw;
      rejected.push_back(step_dir_name(step) + ": " + e.message());
      spdlog::warn("[checkpoint] NOT USING {}: {}; falling back to the previous committed step",
                   step_dir, e.message());
    }
  }
  std::string reasons;
  for (const auto& r : rejected) reasons += "\n  " + r;
  throw comm::AgreedError(ExitCode::kCheckpoint, "checkpoint",
                          "no committed step in " + dir + " can be loaded:" + reasons,
                          "nss_ckpt verify STEP_DIR says what is wrong with each; point "
                          "checkpoint.resume at a step that verifies (a copy or backup), or start "
                          "fresh in another checkpoint.dir");
}

}  // namespace nss::checkpoint
