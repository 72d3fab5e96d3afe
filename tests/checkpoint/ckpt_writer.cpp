// A small MPI program that saves and loads synthetic training state through
// the real library, for the end-to-end tests (kill -9, disk full, h5py,
// consolidation) and the benchmark:
//   ckpt_writer save --dir D --first S --count K [--async] [--keep-last N]
//               [--block-bytes B] [--shape V,H,I,L,KV] [--fsize-limit BYTES]
//               [--overlap-snapshot] [--interval-ms MS] [--tied | --lora RANK --base HF_DIR]
//   ckpt_writer load --dir D [--resume auto|PATH] [--shape V,H,I,L,KV] [--tied | --lora RANK]
// save prints "rank R: committed step S" or "rank R: step S not saved: ..." per
// save and rank, and rank 0 the metrics.jsonl checkpoint event of every commit
// ({"event": "checkpoint", "step", "bytes", "seconds", "blocking_seconds"});
// --interval-ms stands for the forward/backward after each save (before the
// snapshot fence and the next optimizer step). It exits 0 when every
// save committed, else 5. load prints one JSON line on rank 0 {"step",
// "rejected", "mismatches", "seconds", "bytes_read"} and exits 0 when every
// loaded value is the one saved at that step, 1 when not, 5 when nothing loads.
#include <chrono>
#include <csignal>
#include <cstdio>
#include <sstream>
#include <sys/resource.h>
#include <thread>

#include <CLI/CLI.hpp>

#include "checkpoint/async_saver.h"
#include "checkpoint/load.h"
#include "checkpoint/save.h"
#include "comm/agreement.h"
#include "comm/mpi_app.h"
#include "comm/mpi_communicator.h"
#include "synthetic_state.h"

namespace {

using namespace nss;

testing::SyntheticShape parse_shape(const std::string& text) {
  testing::SyntheticShape shape;
  if (text.empty()) return shape;
  std::vector<std::int64_t> v;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) v.push_back(std::stoll(item));
  if (v.size() != 5) throw UsageError("ckpt_writer", "--shape needs V,H,I,L,KV");
  return {v[0], v[1], v[2], v[3], v[4]};
}

struct Variant {
  testing::SyntheticShape shape;
  bool tied = false;
  std::int64_t lora_rank = 0;  // 0: full model
  std::string base;            // LoRA base model directory

  testing::SyntheticModel model() const {
    return lora_rank > 0 ? testing::synthetic_lora_model(shape, lora_rank)
                         : testing::synthetic_model(shape, true, tied);
  }

  // The resolved configuration of the synthetic model, as training stores it.
  std::string config_yaml() const {
    const auto& s = shape;
    std::string yaml = "model:\n  hidden_size: " + std::to_string(s.hidden) +
                       "\n  intermediate_size: " + std::to_string(s.intermediate) +
                       "\n  num_hidden_layers: " + std::to_string(s.layers) +
                       "\n  num_attention_heads: 4\n  num_key_value_heads: " +
                       std::to_string(4 * s.kv_dim / s.hidden) +
                       "\n  head_dim: " + std::to_string(s.hidden / 4) +
                       "\n  vocab_size: " + std::to_string(s.vocab) +
                       "\n  tie_word_embeddings: " + (tied ? "true" : "false") + "\n";
    if (lora_rank > 0)
      yaml += "training:\n  lora:\n    enabled: true\n    rank: " + std::to_string(lora_rank) +
              "\n    alpha: 16\n    targets: [q_proj, v_proj]\n";
    return yaml;
  }
};

void say(int rank, const std::string& text) {
  std::printf("rank %d: %s\n", rank, text.c_str());
  std::fflush(stdout);
}

ExitCode run_save(comm::Communicator& comm, const std::string& dir, std::int64_t first,
                  std::int64_t count, bool async, bool overlap, std::int64_t keep_last,
                  std::uint64_t block_bytes, std::int64_t interval_ms, const Variant& variant) {
  const auto model = variant.model();
  testing::RankState state = testing::make_rank_state(model, comm.rank(), comm.size());
  std::unique_ptr<checkpoint::AsyncCheckpointer> saver;
  if (async) {
    saver = std::make_unique<checkpoint::AsyncCheckpointer>(
        comm::MpiCommunicator::create(MPI_COMM_WORLD),
        overlap ? checkpoint::SnapshotMode::kOverlapped : checkpoint::SnapshotMode::kCopyInSave);
    saver->reserve_staging(state.buffers);
  }
  bool all_committed = true;
  auto report = [&](const checkpoint::AsyncSaveOutcome& o) {
    all_committed = all_committed && o.committed;
    say(comm.rank(), o.committed ? "committed step " + std::to_string(o.step)
                                 : "step " + std::to_string(o.step) + " not saved: " + o.error);
    if (o.committed && comm.rank() == 0)
      std::printf("%s\n", nlohmann::json{{"event", "checkpoint"},
                                         {"step", o.step},
                                         {"bytes", o.result.bytes},
                                         {"seconds", o.result.seconds},
                                         {"blocking_seconds", o.result.blocking_seconds}}
                              .dump()
                              .c_str());
  };
  // The trainer's order: optimizer step (new values), save, the next step's
  // forward/backward (stood for by a sleep), the snapshot fence, the next optimizer step.
  for (std::int64_t step = first; step < first + count; ++step) {
    testing::fill_rank_state(state, step);
    checkpoint::SaveRequest request;
    request.checkpoint_dir = dir;
    request.step = step;
    request.tensors = model.tensors;
    request.state = {{"step", step}, {"config", variant.config_yaml()}};
    if (!variant.base.empty()) request.state["lora_base"] = {{"path", variant.base}};
    request.keep_last = keep_last;
    request.checksum_block_bytes = block_bytes;
    if (saver) {
      const auto started = saver->save(request, state.buffers);
      if (started.previous) report(*started.previous);
    } else {
      try {
        report({step, true, checkpoint::save_checkpoint(comm, request, state.buffers),
                ExitCode::kOk, ""});
      } catch (const comm::AgreedError& e) {
        report({step, false, {}, e.code(), e.what()});
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(interval_ms));
    if (saver) saver->snapshot_fence();
  }
  if (saver)
    if (auto last = saver->wait()) report(*last);
  return all_committed ? ExitCode::kOk : ExitCode::kCheckpoint;
}

ExitCode run_load(comm::Communicator& comm, const std::string& dir, const std::string& resume,
                  const Variant& variant) {
  const auto model = variant.model();
  testing::RankState state = testing::make_rank_state(model, comm.rank(), comm.size());
  const auto loaded = checkpoint::resume_checkpoint(comm, dir, resume, model.tensors, state.buffers,
                                                    checkpoint::LoadOptions{});
  std::uint64_t mismatches = loaded ? testing::count_mismatches(state, loaded->step) : 0;
  comm.all_reduce(&mismatches, 1, comm::ReduceOp::kSum);
  std::uint64_t bytes_read = loaded ? loaded->bytes_read : 0;
  comm.all_reduce(&bytes_read, 1, comm::ReduceOp::kSum);
  double seconds = loaded ? loaded->seconds : 0;
  comm.all_reduce(&seconds, 1, comm::ReduceOp::kMax);
  if (comm.rank() == 0) {
    nlohmann::json line = {
        {"step", loaded ? nlohmann::json(loaded->step) : nlohmann::json()},
        {"rejected", loaded ? loaded->rejected_steps : std::vector<std::string>{}},
        {"mismatches", mismatches},
        {"seconds", seconds},
        {"bytes_read", bytes_read}};
    std::printf("%s\n", line.dump().c_str());
    std::fflush(stdout);
  }
  return mismatches == 0 ? ExitCode::kOk : ExitCode::kInternal;
}

}  // namespace

int main(int argc, char** argv) {
  return comm::run_mpi_app(argc, argv, [&](int) {
    CLI::App cli{"ckpt_writer"};
    cli.require_subcommand(1);
    std::string dir, resume = "auto", shape_text;
    std::int64_t first = 1, count = 1, keep_last = 0, interval_ms = 0;
    std::uint64_t block_bytes = checkpoint::kDefaultChecksumBlockBytes, fsize_limit = 0;
    bool async = false, overlap = false;
    Variant variant;
    auto* save = cli.add_subcommand("save");
    auto* load = cli.add_subcommand("load");
    for (auto* sub : {save, load}) {
      sub->add_option("--dir", dir)->required();
      sub->add_option("--shape", shape_text);
      sub->add_flag("--tied", variant.tied);
      sub->add_option("--lora", variant.lora_rank);
    }
    save->add_option("--base", variant.base);
    save->add_option("--first", first);
    save->add_option("--count", count);
    save->add_flag("--async", async);
    save->add_flag("--overlap-snapshot", overlap);
    save->add_option("--keep-last", keep_last);
    save->add_option("--block-bytes", block_bytes);
    save->add_option("--fsize-limit", fsize_limit);
    save->add_option("--interval-ms", interval_ms);
    load->add_option("--resume", resume);
    try {
      cli.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
      throw comm::AgreedError(ExitCode::kUsage, "ckpt_writer", e.what(), "");
    }
    if (fsize_limit > 0) {
      // A file-size limit makes write() fail with EFBIG, like a full disk.
      std::signal(SIGXFSZ, SIG_IGN);
      const rlimit limit{fsize_limit, fsize_limit};
      setrlimit(RLIMIT_FSIZE, &limit);
    }
    auto comm = comm::MpiCommunicator::create(MPI_COMM_WORLD);
    variant.shape = parse_shape(shape_text);
    if (save->parsed())
      return run_save(*comm, dir, first, count, async, overlap, keep_last, block_bytes, interval_ms,
                      variant);
    return run_load(*comm, dir, resume, variant);
  });
}
