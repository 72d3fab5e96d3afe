// nss_consolidate STEP_DIR --output PATH [--format hdf5|safetensors|hf]
//                 [--dtype float32|bfloat16|float16] [--max-memory 256MiB]
//                 [--merge-lora [--dequantized-base]]
// Serial (no MPI, no libtorch): runs on a login node.
#include <csignal>
#include <cstdio>
#include <string>

#include <CLI/CLI.hpp>

#include "checkpoint/consolidate.h"
#include "core/app_main.h"
#include "core/units.h"
#include "h5/errors.h"
#include "log/logger.h"
#include "tool_cli.h"

int main(int argc, char** argv) {
  return nss::run_app("nss_consolidate", [&] {
    nss::log::init(0);
    // A file-size limit (ulimit -f) then fails a write with EFBIG, which
    // removes the partial output, instead of killing the tool beside it.
    std::signal(SIGXFSZ, SIG_IGN);
    nss::h5::leave_open_files_to_the_kernel_at_exit();
    nss::checkpoint::ConsolidateOptions options;
    std::string dtype = "float32", max_memory = "256MiB", max_shard_size = "5GB";
    bool no_file_locking = false;
    CLI::App cli{
        "nss_consolidate: stream a sharded checkpoint into one file under a memory budget"};
    cli.add_option("step_dir", options.step_dir, "Committed step directory (step_NNNNNNNN)")
        ->required();
    cli.add_option("--output", options.output, "Output file (hdf5, safetensors) or directory (hf)")
        ->required();
    nss::add_choice_option(cli, "--format", options.format, "What to write");
    cli.add_option("--dtype", dtype, "Type of floating tensors: float32, bfloat16 or float16")
        ->capture_default_str();
    cli.add_option("--max-memory", max_memory, "Budget for data buffers, e.g. 256MiB")
        ->capture_default_str();
    cli.add_option("--max-shard-size", max_shard_size,
                   "hf: split model.safetensors into shards of at most this size (with an index)")
        ->capture_default_str();
    cli.add_flag("--merge-lora", options.merge_lora,
                 "LoRA checkpoints: write merged weights W + (alpha/r) B A instead of the adapter");
    cli.add_flag("--dequantized-base", options.dequantized_base,
                 "With --merge-lora on a QLoRA step: merge onto the NF4 round trip of the base "
                 "(exactly what was trained) instead of the original base weights");
    cli.add_flag("--no-file-locking", no_file_locking,
                 "Open HDF5 files without file locks (file systems without flock)");
    if (!nss::parse_tool_arguments(
            cli, argc, argv, "nss_consolidate",
            "nss_consolidate STEP_DIR --output PATH [--format hdf5|safetensors|hf] [--dtype "
            "float32|bfloat16|float16] [--max-memory 256MiB] [--merge-lora [--dequantized-base]]"))
      return nss::ExitCode::kOk;
    options.dtype = nss::parse_dtype(dtype);
    options.max_memory = nss::parse_bytes(max_memory);
    options.max_shard_bytes = nss::parse_bytes(max_shard_size);
    options.file_locking = !no_file_locking;
    const auto report = nss::checkpoint::consolidate(options);
    std::printf("wrote %s: %llu tensors, %s in %.2f s\n", report.output.c_str(),
                static_cast<unsigned long long>(report.tensors),
                nss::format_bytes(report.bytes_written).c_str(), report.seconds);
    return nss::ExitCode::kOk;
  });
}
