#include "train/job.h"

#include <csignal>
#include <cstdio>
#include <memory>
#include <optional>

#include <ATen/Parallel.h>
#include <spdlog/spdlog.h>

#include "arch/architecture.h"
#include "comm/agreement.h"
#include "comm/mpi_communicator.h"
#include "comm/mpi_runtime.h"
#include "comm/stop_signal.h"
#include "config/load.h"
#include "core/fs.h"
#include "core/heap_tuning.h"
#include "h5/errors.h"
#include "hf/hf_config.h"
#include "log/directory_lock.h"
#include "log/logger.h"
#include "memory/memory_counter.h"
#include "model/unit_layouts.h"
#include "preflight/preflight.h"
#include "train/compute_device.h"
#include "train/environment.h"
#include "train/run_identity.h"
#include "train/trainer.h"
#include "train/training_preflight.h"
#include "train/training_topology.h"

namespace nss::train {
namespace {

// Rank 0 reads and validates the file (with model.from_pretrained, the shape
// comes from its config.json); the other ranks receive the resolved
// text, so every rank runs with byte-identical settings even if the file
// changes on disk mid-launch, and a bad file gives one message, not N. Batch
// arithmetic is the preflight's first check (reported with all the others in
// preflight.json); without a preflight it is checked here.
config::Config agree_on_config(comm::Communicator& comm, const JobOptions& options) {
  std::string resolved;
  comm::run_on_root(comm, 0, [&] {
    config::Config config = config::load_config({options.config_path, options.overrides});
    // Before the preflight, so that every check sees the model the run trains.
    if (!config.model.from_pretrained.empty()) {
      config.model = hf::resolve_pretrained_shape(config.model);
      config::validate(config);
    }
    // The layer plan names a bad model.layer_types entry here (exit 2), not
    // at the first forward, and the tensor-parallel plan a size the model's
    // heads do not divide into.
    arch::describe(config.model);
    model::tensor_parallel_plan(config);
    if (!config.preflight.enabled) config::validate_layout(config, comm.size());
    resolved = config::to_yaml(config, /*with_comments=*/false);
  });
  comm::broadcast_text(comm, resolved, 0);
  return config::parse_config_text(resolved, "resolved configuration from rank 0");
}

// Rank 0 owns the run directory and the checkpoint directory for the job's
// life (locks, run id, resolved configuration); every rank logs there.
struct RunDirectory {
  std::optional<log::DirectoryLock> run_lock, checkpoint_lock;
  std::string run_id;
};

void claim_run_directory(comm::Communicator& world, const config::Config& config,
                         RunDirectory& claimed) {
  const std::string& run_dir = config.run.output_dir;
  comm::run_on_root(world, 0, [&] {
    claimed.run_lock.emplace(run_dir, log::kRunDirectory);
    if (!same_directory(config.checkpoint.dir, run_dir))
      claimed.checkpoint_lock.emplace(config.checkpoint.dir, log::kCheckpointDirectory);
    claimed.run_id = run_identity(run_dir);
    create_directories(run_dir + "/logs", "run");
    write_file_atomic(run_dir + "/config.resolved.yaml", config::to_yaml(config, true));
  });
  comm::broadcast_text(world, claimed.run_id, 0);
  comm::run_on_all(world, [&] { log::attach_rank_file(run_dir + "/logs", world.rank()); });
}

// Where each rank computes, recorded with the job's environment.
ComputeDevice choose_device(comm::Communicator& world, const config::Config& config,
                            const comm::ProcessLayout& layout, const JobOptions& options) {
  ComputeDevice device;
  comm::run_on_all(world, [&] { device = choose_compute_device(config.parallel, MPI_COMM_WORLD); });
  const auto entries = comm::all_gather_text(world, describe_rank(layout, device.device.str()));
  comm::run_on_root(world, 0, [&] {
    write_file_atomic(config.run.output_dir + "/environment.json",
                      describe_environment(entries, options.command_line));
  });
  spdlog::info("nss_hpc: run {} in {}, {} ranks, {} threads per rank, device {}{}", config.run.name,
               config.run.output_dir, world.size(), layout.threads_per_rank, device.device.str(),
               device.ranks_on_device > 1
                   ? " shared by " + std::to_string(device.ranks_on_device) + " ranks"
                   : std::string());
  return device;
}

void run_training_preflight(comm::Communicator& world, const config::Config& config,
                            const comm::ProcessLayout& layout, const ComputeDevice& device,
                            const JobOptions& options, const JobHooks& hooks) {
  if (options.preflight_done) {
    spdlog::info(
        "[preflight] go, given before this start for the same configuration: not repeated");
    return;
  }
  if (!config.preflight.enabled) {
    spdlog::warn("[preflight] skipped: preflight.enabled is false (no checks, no preflight.json)");
    return;
  }
  preflight::PreflightPlan plan = training_preflight_plan(config, device.device);
  plan.before_verdict = hooks.before_preflight_verdict;
  // Resident memory before any model exists: the CPU fixed overhead.
  const auto baseline = static_cast<std::uint64_t>(memory::resident_bytes());
  preflight::run_preflight(
      world, MPI_COMM_WORLD,
      {config, layout, device_kind(device.device), config.run.output_dir, baseline}, plan);
}

}  // namespace

ExitCode run_job(const JobOptions& options, const JobHooks& hooks) {
  h5::leave_open_files_to_the_kernel_at_exit();  // before any HDF5 call
  TrainingTopology topology;
  comm::MpiCommunicator& world = topology.world();
  const comm::ProcessLayout layout = comm::discover_layout(MPI_COMM_WORLD);
  const config::Config config = agree_on_config(world, options);
  if (options.print_config) {
    if (world.rank() == 0) std::fputs(config::to_yaml(config, true).c_str(), stdout);
    return ExitCode::kOk;
  }
  log::set_level(config::choice_name(config.logging.level));
  // From here on a signal is a request to stop at the next step boundary.
  comm::install_stop_signal_handlers();
  // A file-size limit (ulimit -f) must fail a checkpoint write (EFBIG, reported,
  // training goes on), not kill the rank mid-step.
  std::signal(SIGXFSZ, SIG_IGN);
  if (keep_freed_memory_for_reuse())
    spdlog::debug("[train] glibc keeps freed blocks up to 32 MiB for the next step");
  topology.watch_world(config);

  RunDirectory run_directory;
  claim_run_directory(world, config, run_directory);
  const ComputeDevice device = choose_device(world, config, layout, options);
  // Before the preflight, so that its synthetic step computes (and allocates
  // its per-thread scratch) with the threads training will use.
  at::set_num_threads(layout.threads_per_rank);
  run_training_preflight(world, config, layout, device, options, hooks);
  if (options.preflight_only) {
    spdlog::info("nss_hpc: --preflight-only: stopping after the preflight");
    return ExitCode::kOk;
  }
  topology.connect_units(config, device);
  TrainerContext context;
  context.run_dir = config.run.output_dir;
  context.run_id = run_directory.run_id;
  context.threads = layout.threads_per_rank;
  context.device = device.device;
  context.plan = plan::make_run_plan(config, device_kind(device.device), world.size());
  return train(config, topology, std::move(context));
}

}  // namespace nss::train
