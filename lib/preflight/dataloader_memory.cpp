#include "preflight/dataloader_memory.h"

#include <algorithm>
#include <cstdio>
#include <limits>

#include "core/units.h"
#include "data/loader_memory.h"
#include "layout/sharded_state_layout.h"
#include "model/unit_layouts.h"

namespace nss::preflight {
namespace {

constexpr const char* kId = "dataloader.host_memory";

// Saturates instead of wrapping: absurd settings must read as huge, not small.
std::uint64_t times(std::uint64_t a, std::uint64_t b) {
  if (a != 0 && b > std::numeric_limits<std::uint64_t>::max() / a)
    return std::numeric_limits<std::uint64_t>::max();
  return a * b;
}

std::uint64_t sample_bytes(const config::Config& config) {
  return static_cast<std::uint64_t>(
      data::sample_bytes(config.data.seq_len, config.data.packing != config::Packing::kWindows));
}

// One queued micro-batch: its samples, as read and as copied into the
// trainer's tensors.
std::uint64_t slot_bytes(const config::Config& config) {
  return times(static_cast<std::uint64_t>(config.training.micro_batch_size),
               sample_bytes(config) * 2);
}

std::uint64_t slots(const config::Config& config) {
  return times(static_cast<std::uint64_t>(std::max<std::int64_t>(1, config.data.num_workers)),
               static_cast<std::uint64_t>(config.data.prefetch_factor));
}

struct NodeDemand {
  std::string host;
  int ranks = 0;
  std::uint64_t bytes = 0;
  std::optional<std::uint64_t> usable;  // smallest over the node's ranks
  std::string bound_by;
  double fraction() const {
    return usable && *usable > 0 ? double(bytes) / double(*usable) : 1e300;
  }
};

std::vector<NodeDemand> node_demands(const PreflightContext& context, std::uint64_t per_rank) {
  std::vector<NodeDemand> demands;
  for (const auto& node : group_by_node(context.ranks)) {
    NodeDemand demand;
    demand.host = node.host;
    demand.ranks = static_cast<int>(node.ranks.size());
    demand.bytes = times(per_rank, node.ranks.size());
    bool all_known = true;
    for (const RankFacts* r : node.ranks) {
      const auto& usable = r->memory.usable_bytes;
      if (!usable) {
        all_known = false;
        continue;
      }
      if (!demand.usable || *usable < *demand.usable) {
        demand.usable = usable;
        demand.bound_by = r->memory.bound_by;
      }
    }
    if (!all_known) demand.usable.reset();
    demands.push_back(demand);
  }
  return demands;
}

std::string remediation(const config::Config& config, const NodeDemand& node,
                        std::uint64_t host_copy_per_rank) {
  const std::string more_memory = "or give the job more memory on host " + node.host +
                                  " (Slurm --mem), or fewer ranks per node";
  const double host_copies = double(host_copy_per_rank) * node.ranks;
  const double budget =
      config.preflight.host_memory_warn_fraction * double(*node.usable) - host_copies;
  if (host_copy_per_rank > 0 && budget <= 0)
    return "the pinned host copies of the checkpointed state alone need " +
           format_bytes(host_copies) + " on host " + node.host +
           ": run more ranks (the state is divided by the world size), " + more_memory;
  const double per_slot_on_node = double(slot_bytes(config)) * node.ranks;
  const auto fitting = static_cast<std::uint64_t>(budget / per_slot_on_node);
  if (fitting == 0)
    return "even one queued batch per rank needs " + format_bytes(per_slot_on_node) + " on host " +
           node.host + ": lower training.micro_batch_size or data.seq_len, " + more_memory;
  const std::int64_t workers = std::max<std::int64_t>(1, config.data.num_workers);
  const auto new_workers = static_cast<std::int64_t>(
      std::min<std::uint64_t>(static_cast<std::uint64_t>(workers), fitting));
  const auto new_prefetch = static_cast<std::int64_t>(fitting / new_workers);
  return "keep data.num_workers x data.prefetch_factor <= " + std::to_string(fitting) + " (now " +
         std::to_string(workers) + " x " + std::to_string(config.data.prefetch_factor) +
         "), e.g. --set data.num_workers=" + std::to_string(new_workers) +
         " --set data.prefetch_factor=" + std::to_string(new_prefetch) + "; " + more_memory;
}

}  // namespace

std::uint64_t dataloader_bytes_per_rank(const config::Config& config) {
  return times(slots(config), slot_bytes(config));
}

std::uint64_t checkpoint_host_copy_bytes(const PreflightContext& context) {
  if (context.device != DeviceKind::kCuda) return 0;
  return static_cast<std::uint64_t>(
      layout::ShardedStateLayout(model::unit_layouts(context.config, context.world_size), 0)
          .saved_bytes());
}

Check check_dataloader_host_memory(const PreflightContext& context, PreflightReport& report) {
  const auto& config = context.config;
  const std::uint64_t host_copy = checkpoint_host_copy_bytes(context);
  const std::uint64_t per_rank = dataloader_bytes_per_rank(config) + host_copy;
  const auto demands = node_demands(context, per_rank);

  const NodeDemand* unknown = nullptr;
  const NodeDemand* worst = nullptr;
  for (const auto& demand : demands) {
    if (!demand.usable) {
      if (!unknown) unknown = &demand;
    } else if (!worst || demand.fraction() > worst->fraction()) {
      worst = &demand;
    }
  }
  const std::string formula =
      std::to_string(std::max<std::int64_t>(1, config.data.num_workers)) + " workers x " +
      std::to_string(config.data.prefetch_factor) + " prefetch x " +
      std::to_string(config.training.micro_batch_size) + " sequences x " +
      format_bytes(sample_bytes(config)) + " (" + std::to_string(config.data.seq_len + 1) +
      " tokens, sample id, target mask" +
      (config.data.packing != config::Packing::kWindows ? ", positions, segments" : "") + ") x 2" +
      (host_copy > 0
           ? " + " + format_bytes(host_copy) + " pinned host copy of the checkpointed state"
           : std::string()) +
      " = " + format_bytes(per_rank) + " per rank";
  if (!worst)
    return Check::skipped(kId, ExitCode::kResources,
                          "usable host memory is unknown on host " + unknown->host +
                              " (/proc/meminfo unreadable); the estimate is " + formula);

  report.dataloader.estimated_bytes = worst->bytes;
  report.dataloader.available_bytes = worst->usable;
  const double fraction = worst->fraction();
  const double warn_at = config.preflight.host_memory_warn_fraction;
  const double fail_at = config.preflight.host_memory_fail_fraction;
  const std::string finding = "host " + worst->host + ": " + std::to_string(worst->ranks) +
                              " ranks x (" + formula + ") = " + format_bytes(worst->bytes) + " = " +
                              format_percent(fraction) + " of usable " +
                              format_bytes(*worst->usable) + " (bound by " + worst->bound_by + ")";
  const double threshold = fail_at * double(*worst->usable);
  Check check;
  if (fraction > fail_at) {
    check = Check::fail(
        kId, ExitCode::kResources,
        finding + ", above preflight.host_memory_fail_fraction " + format_percent(fail_at),
        remediation(config, *worst, host_copy));
  } else if (fraction > warn_at) {
    check = Check::warn(
        kId, ExitCode::kResources,
        finding + ", above preflight.host_memory_warn_fraction " + format_percent(warn_at),
        remediation(config, *worst, host_copy));
  } else if (unknown) {
    check = Check::warn(kId, ExitCode::kResources,
                        finding + "; usable host memory is unknown on host " + unknown->host,
                        "make /proc/meminfo readable on host " + unknown->host);
  } else {
    check = Check::pass(kId, ExitCode::kResources, finding);
  }
  return check.with_numbers(double(worst->bytes), std::nullopt, threshold, "bytes");
}

}  // namespace nss::preflight
