#include "preflight/layout_checks.h"

#include <algorithm>
#include <map>
#include <set>

#include "config/derived.h"
#include "config/load.h"
#include "core/units.h"
#include "data/poisson_plan.h"
#include "preflight/memory_checks.h"

namespace nss::preflight {
namespace {

constexpr const char* kDevices = "layout.devices";
constexpr const char* kDtype = "layout.dtype";

// Compute threads against usable CPUs on one node.
struct CpuLoad {
  int demand = 0;
  int capacity = 1;
  double ratio() const { return static_cast<double>(demand) / capacity; }
};

CpuLoad node_load(const NodeRanks& node) {
  const bool shared = std::any_of(node.ranks.begin(), node.ranks.end(),
                                  [](const RankFacts* r) { return r->cpus_shared; });
  if (shared) {
    // The ranks compete for one CPU set.
    CpuLoad load;
    for (const RankFacts* r : node.ranks) {
      load.demand += r->threads;
      load.capacity = std::max(load.capacity, r->usable_cpus);
    }
    return load;
  }
  // Bound by the launcher: each rank owns its CPUs; the tightest rank decides.
  CpuLoad worst{0, 1};
  for (const RankFacts* r : node.ranks) {
    const CpuLoad load{r->threads, std::max(1, r->usable_cpus)};
    if (load.ratio() > worst.ratio()) worst = load;
  }
  return worst;
}

// CPU runs: more compute threads than CPUs makes every rank slower but nothing
// wrong, so this is a warning.
Check check_cpu_threads(const PreflightContext& context) {
  CpuLoad worst{0, 1};
  std::string worst_host;
  for (const auto& node : group_by_node(context.ranks)) {
    const CpuLoad load = node_load(node);
    if (worst_host.empty() || load.ratio() > worst.ratio()) {
      worst = load;
      worst_host = node.host;
    }
  }
  const std::string numbers = std::to_string(worst.demand) + " compute threads on " +
                              std::to_string(worst.capacity) + " usable CPUs";
  if (worst.demand <= worst.capacity)
    return Check::pass(kDevices, ExitCode::kUsage,
                       "CPU run: every node has a CPU per compute thread (busiest: host " +
                           worst_host + ", " + numbers + ")")
        .with_numbers(worst.demand, std::nullopt, worst.capacity, "threads");
  return Check::warn(kDevices, ExitCode::kUsage,
                     "CPU run: host " + worst_host + " is oversubscribed: " + numbers +
                         " (every rank runs slower)",
                     "start fewer ranks per node or lower OMP_NUM_THREADS so that ranks x threads "
                     "<= usable CPUs on every node")
      .with_numbers(worst.demand, std::nullopt, worst.capacity, "threads");
}

Check check_gpu_assignment(const PreflightContext& context) {
  const bool sharing_allowed = context.config.parallel.share_devices;
  std::string idle_note, shared_note;
  int busiest_ranks = 0, busiest_gpus = 0;
  for (const auto& node : group_by_node(context.ranks)) {
    std::map<std::string, const RankFacts*> owner;  // physical GPU -> first rank using it
    std::set<std::string> visible;
    for (const RankFacts* r : node.ranks) {
      for (const auto& device : r->gpus.devices) visible.insert(device.pci_bus_id);
      const GpuDevice* device = rank_device(*r);
      if (!device)
        return Check::fail(kDevices, ExitCode::kUsage,
                           rank_label(*r) + " sees no GPU" +
                               (r->gpus.problem.empty() ? "" : ": " + r->gpus.problem),
                           "make one GPU visible per rank (srun --gpus-per-task=1, or "
                           "CUDA_VISIBLE_DEVICES), or run on CPU");
      const auto [it, fresh] = owner.emplace(device->pci_bus_id, r);
      if (!fresh && sharing_allowed) {
        if (shared_note.empty())
          shared_note = "host " + node.host + ": rank " + std::to_string(it->second->rank) +
                        " and rank " + std::to_string(r->rank) + " share GPU " + device->pci_bus_id;
      } else if (!fresh)
        return Check::fail(kDevices, ExitCode::kUsage,
                           "host " + node.host + ": rank " + std::to_string(it->second->rank) +
                               " and rank " + std::to_string(r->rank) + " would share GPU " +
                               device->pci_bus_id + " (" + std::to_string(node.ranks.size()) +
                               " ranks, " + std::to_string(visible.size()) + " GPUs visible)",
                           "start one rank per GPU: at most " + std::to_string(visible.size()) +
                               " ranks on host " + node.host +
                               " (e.g. --ntasks-per-node=" + std::to_string(visible.size()) +
                               "), or set parallel.share_devices: true to share them on purpose")
            .with_numbers(static_cast<double>(node.ranks.size()), std::nullopt,
                          static_cast<double>(visible.size()), "ranks");
    }
    if (visible.size() > node.ranks.size() && idle_note.empty())
      idle_note = "host " + node.host + ": " + std::to_string(visible.size()) + " GPUs, " +
                  std::to_string(node.ranks.size()) + " ranks";
    if (static_cast<int>(node.ranks.size()) > busiest_ranks) {
      busiest_ranks = static_cast<int>(node.ranks.size());
      busiest_gpus = static_cast<int>(visible.size());
    }
  }
  if (!shared_note.empty())
    return Check::warn(kDevices, ExitCode::kUsage,
                       "GPUs shared by several ranks (parallel.share_devices: true): " +
                           shared_note + "; each rank gets its share of the GPU's memory and time",
                       "start one rank per GPU unless sharing is what you want")
        .with_numbers(busiest_ranks, std::nullopt, busiest_gpus, "ranks");
  if (!idle_note.empty())
    return Check::warn(kDevices, ExitCode::kUsage, "GPUs left idle: " + idle_note,
                       "start one rank per GPU to use them all")
        .with_numbers(busiest_ranks, std::nullopt, busiest_gpus, "ranks");
  return Check::pass(kDevices, ExitCode::kUsage, "one GPU per rank on every node")
      .with_numbers(busiest_ranks, std::nullopt, busiest_gpus, "ranks");
}

}  // namespace

Check check_batch_layout(const config::Config& config, int world_size) {
  const char* id = "layout.batch";
  try {
    config::validate_layout(config, world_size);
  } catch (const UsageError& e) {
    return Check::fail(id, ExitCode::kUsage, e.message(), e.hint());
  }
  const auto& t = config.training;
  if (config::poisson_batches(config)) {
    const int readers = config::data_parallel_ranks(config, world_size);
    const std::string micro = std::to_string(t.micro_batch_size);
    return Check::pass(
        id, ExitCode::kUsage,
        "Poisson batches (privacy.sampling poisson): global_batch_size " +
            std::to_string(t.global_batch_size) +
            " is the expected batch, not a fixed one; for a step's batch of B units over " +
            config::data_parallel_ranks_text(config, world_size) +
            " every rank runs ceil(ceil(B / " + std::to_string(readers) + ") / " + micro +
            ") micro-steps of " + micro + ", " +
            std::to_string(
                data::poisson_micro_steps(t.global_batch_size, readers, t.micro_batch_size)) +
            " at the expected batch (at the batch exceeded with probability 1e-6: see "
            "privacy.budget)");
  }
  return Check::pass(id, ExitCode::kUsage,
                     "global_batch_size " + std::to_string(t.global_batch_size) +
                         " = micro_batch_size " + std::to_string(t.micro_batch_size) + " x " +
                         config::data_parallel_ranks_text(config, world_size) + " x " +
                         std::to_string(config::accumulation_steps(config, world_size)) +
                         " accumulation steps");
}

Check check_devices(const PreflightContext& context) {
  return context.device == DeviceKind::kCuda ? check_gpu_assignment(context)
                                             : check_cpu_threads(context);
}

Check check_dtype(const PreflightContext& context) {
  const config::ComputeDtype configured = context.config.training.dtype;
  const config::ComputeDtype dtype =
      config::resolved_dtype(context.config.training, context.device);
  const std::string setting = std::string("training.dtype ") + config::choice_name(configured) +
                              (configured == config::ComputeDtype::kAuto
                                   ? std::string(" (") + config::choice_name(dtype) + ")"
                                   : std::string());
  if (dtype == config::ComputeDtype::kFp32)
    return Check::pass(kDtype, ExitCode::kUsage, setting + " runs on every device");

  if (context.device == DeviceKind::kCpu) {
    for (const auto& facts : context.ranks) {
      if (!facts.cpu_native_bf16)
        return Check::warn(kDtype, ExitCode::kUsage,
                           setting + " on CPUs without native bf16 instructions (host " +
                               facts.host +
                               " lacks avx512_bf16/amx_bf16): correct but "
                               "converted in software, much slower than fp32",
                           "set training.dtype: fp32 (or auto, which is fp32 on CPU)");
    }
    return Check::pass(kDtype, ExitCode::kUsage,
                       setting + ": every node has native bf16 instructions");
  }

  for (const auto& facts : context.ranks) {
    const GpuDevice* device = rank_device(facts);
    if (!device)
      return Check::skipped(kDtype, ExitCode::kUsage,
                            rank_label(facts) + " has no GPU to check (see layout.devices)");
    if (device->compute_major < 8)
      return Check::fail(kDtype, ExitCode::kUsage,
                         setting + " needs compute capability 8.0 (Ampere) or newer; " +
                             rank_label(facts) + " uses " + device->name + " (" +
                             std::to_string(device->compute_major) + "." +
                             std::to_string(device->compute_minor) + ")",
                         "set training.dtype: fp32, or run on Ampere or newer GPUs");
  }
  return Check::pass(kDtype, ExitCode::kUsage, setting + " is supported by every rank's GPU");
}

}  // namespace nss::preflight
