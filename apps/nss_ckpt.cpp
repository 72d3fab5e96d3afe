// nss_ckpt inspect STEP_DIR | nss_ckpt verify STEP_DIR|CHECKPOINT_DIR
// Serial (no MPI, no libtorch): runs on a login node.
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "checkpoint/committed_step.h"
#include "checkpoint/inspect.h"
#include "checkpoint/step_directory.h"
#include "checkpoint/verify.h"
#include "core/app_main.h"
#include "core/units.h"
#include "log/logger.h"
#include "tool_cli.h"

namespace {

namespace fs = std::filesystem;
using nss::ExitCode;

// A committed step directory itself, or every committed step of a checkpoint
// directory; a step that is not committed (in progress or pruned) is exit 5.
std::vector<std::string> steps_to_verify(const std::string& path) {
  if (!fs::exists(path))
    throw nss::UsageError("nss_ckpt", path + " does not exist",
                          "give a step directory (step_NNNNNNNN) or a checkpoint directory");
  if (nss::checkpoint::names_a_step(path)) {
    nss::checkpoint::require_committed_step(path);
    return {path};
  }
  std::vector<std::string> steps;
  for (const auto step : nss::checkpoint::committed_steps(path))
    steps.push_back(nss::checkpoint::step_dir_path(path, step));
  if (steps.empty())
    throw nss::UsageError("nss_ckpt", path + " holds no committed step",
                          "give a step directory (step_NNNNNNNN) or a checkpoint directory");
  return steps;
}

ExitCode verify(const std::string& path, bool file_locking) {
  bool all_ok = true;
  for (const auto& step_dir : steps_to_verify(path)) {
    const auto report = nss::checkpoint::verify_checkpoint(step_dir, file_locking);
    if (report.ok()) {
      std::printf("OK %s: %llu tensors, %llu chunks, %s verified\n", step_dir.c_str(),
                  static_cast<unsigned long long>(report.tensors),
                  static_cast<unsigned long long>(report.chunks),
                  nss::format_bytes(report.bytes_checked).c_str());
      continue;
    }
    all_ok = false;
    std::printf("FAILED %s: %zu problem(s)\n", step_dir.c_str(), report.problems.size());
    for (const auto& problem : report.problems) std::printf("  %s\n", problem.c_str());
  }
  std::fflush(stdout);
  return all_ok ? ExitCode::kOk : ExitCode::kCheckpoint;
}

}  // namespace

int main(int argc, char** argv) {
  return nss::run_app("nss_ckpt", [&] {
    nss::log::init(0);
    CLI::App cli{"nss_ckpt: inspect or verify nss_hpc checkpoints (no MPI needed)"};
    cli.require_subcommand(1);
    std::string path;
    bool no_file_locking = false;
    auto* inspect = cli.add_subcommand("inspect", "Tensors, shapes, dtypes, chunks, state, sizes");
    inspect->add_option("step_dir", path, "Step directory (step_NNNNNNNN)")->required();
    auto* verify_cmd = cli.add_subcommand(
        "verify", "Check every checksum and every tensor's coverage; exit 0 or 5");
    verify_cmd->add_option("step_dir", path, "Step directory, or a checkpoint directory")
        ->required();
    for (auto* sub : {inspect, verify_cmd})
      sub->add_flag("--no-file-locking", no_file_locking,
                    "Open HDF5 files without file locks (file systems without flock)");
    if (!nss::parse_tool_arguments(cli, argc, argv, "nss_ckpt",
                                   "nss_ckpt inspect STEP_DIR | nss_ckpt verify STEP_DIR"))
      return ExitCode::kOk;
    if (inspect->parsed()) {
      if (!fs::exists(path))
        throw nss::UsageError("nss_ckpt", path + " does not exist", "give a step directory");
      std::fputs(nss::checkpoint::describe_checkpoint(path).c_str(), stdout);
      return ExitCode::kOk;
    }
    return verify(path, !no_file_locking);
  });
}
