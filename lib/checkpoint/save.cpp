#include "checkpoint/save.h"

#include <algorithm>
#include <chrono>
#include <filesystem>

#include <spdlog/spdlog.h>

#include "checkpoint/commit.h"
#include "checkpoint/rank_file_writer.h"
#include "checkpoint/step_directory.h"
#include "comm/agreement.h"
#include "core/error.h"
#include "core/units.h"

namespace fs = std::filesystem;

namespace nss::checkpoint {
namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Every rank must describe the same step and the same tensors; a mismatch is a
// caller bug that would otherwise produce an index no rank agrees with.
void check_same_on_every_rank(comm::Communicator& comm, const SaveRequest& request) {
  const std::uint64_t fingerprint = tensor_list_fingerprint(request.tensors);
  std::uint64_t values[4] = {fingerprint, ~fingerprint, static_cast<std::uint64_t>(request.step),
                             ~static_cast<std::uint64_t>(request.step)};
  comm.all_reduce(values, 4, comm::ReduceOp::kMax);
  if (values[0] != fingerprint || values[1] != ~fingerprint)
    throw comm::AgreedError(ExitCode::kUsage, "checkpoint",
                            "ranks passed different tensor lists to save",
                            "every rank must describe the same logical tensors");
  if (values[2] != static_cast<std::uint64_t>(request.step) ||
      values[3] != ~static_cast<std::uint64_t>(request.step))
    throw comm::AgreedError(ExitCode::kUsage, "checkpoint", "ranks passed different step numbers",
                            "call save at the same step on every rank");
}

// Rank files of every rank, as JSON text for all_gather_text.
std::string encode_rank_file(const RankFileResult& result) {
  nlohmann::json chunks = nlohmann::json::array();
  for (const auto& c : result.chunks)
    chunks.push_back({c.tensor, c.chunk.file, c.chunk.dataset, c.chunk.dataset_offset,
                      c.chunk.tensor_offset, c.chunk.length, c.chunk.checksums});
  return nlohmann::json{{"bytes", result.bytes}, {"chunks", chunks}}.dump();
}

RankFileResult decode_rank_file(const std::string& text) {
  const auto j = nlohmann::json::parse(text);
  RankFileResult result;
  result.bytes = j.at("bytes").get<std::uint64_t>();
  for (const auto& c : j.at("chunks"))
    result.chunks.push_back({c[0].get<std::string>(),
                             {c[1].get<std::string>(), c[2].get<std::string>(),
                              c[3].get<std::uint64_t>(), c[4].get<std::uint64_t>(),
                              c[5].get<std::uint64_t>(), c[6].get<std::vector<std::string>>()}});
  return result;
}

}  // namespace

SaveResult save_checkpoint(comm::Communicator& comm, const SaveRequest& request,
                           const std::vector<ShardBuffer>& buffers) {
  const auto start = std::chrono::steady_clock::now();
  comm::CollectiveLabel label(comm, "checkpoint save step " + std::to_string(request.step));
  check_same_on_every_rank(comm, request);
  comm::run_on_all(comm, [&] { validate_layout(request.tensors, buffers); });

  const std::string final_dir = step_dir_path(request.checkpoint_dir, request.step);
  const std::string tmp_dir = step_tmp_path(request.checkpoint_dir, request.step);
  comm::run_on_root(comm, 0, [&] { prepare_step_directory(request.checkpoint_dir, request.step); });

  std::vector<RankFileResult> files;
  try {
    RankFileResult mine;
    comm::run_on_all(comm, [&] {
      const std::string path = (fs::path(tmp_dir) / rank_file_name(comm.rank())).string();
      RankFileOptions options;
      options.checksum_block_bytes = request.checksum_block_bytes;
      options.slice_bytes = request.slice_bytes;
      options.file_locking = request.file_locking;
      mine = write_rank_file(path, buffers, options);
    });
    for (const auto& text : comm::all_gather_text(comm, encode_rank_file(mine)))
      files.push_back(decode_rank_file(text));
    comm::run_on_root(comm, 0, [&] {
      CheckpointIndex index;
      index.step = request.step;
      index.world_size = comm.size();
      index.checksum_block_bytes = request.checksum_block_bytes;
      index.state = request.state;
      index.secrets = request.secrets;
      for (const auto& t : request.tensors)
        index.tensors[t.name] = {t.shape, t.dtype, {}, t.column_blocks};
      for (int r = 0; r < comm.size(); ++r) {
        index.file_bytes[rank_file_name(r)] = files[r].bytes;
        for (const auto& c : files[r].chunks) index.tensors[c.tensor].chunks.push_back(c.chunk);
      }
      // In tensor order: under hybrid sharding a tensor's chunks come from
      // ranks in another order (each replica writes part of every shard).
      for (auto& [name, tensor] : index.tensors)
        std::stable_sort(tensor.chunks.begin(), tensor.chunks.end(),
                         [](const ChunkRecord& a, const ChunkRecord& b) {
                           return a.tensor_offset < b.tensor_offset;
                         });
      commit_step(request.checkpoint_dir, index, request.keep_last);
    });
  } catch (const comm::AgreedError& e) {
    if (comm.rank() == 0) discard_step_directory(tmp_dir);
    spdlog::error("[checkpoint] step {} was not saved: {}", request.step, e.message());
    throw;
  }

  SaveResult result;
  result.step = request.step;
  result.step_dir = final_dir;
  for (const auto& f : files) result.bytes += f.bytes;
  result.seconds = seconds_since(start);
  result.blocking_seconds = result.seconds;
  spdlog::info("[checkpoint] saved step {}: {} in {:.2f} s ({}/s) to {}", request.step,
               format_bytes(result.bytes), result.seconds,
               format_bytes(result.bytes / std::max(result.seconds, 1e-9)), final_dir);
  return result;
}

}  // namespace nss::checkpoint
