// What each rank tells rank 0 before the checks: where it runs, how much host
// memory it can really use, its CPUs and GPUs, and whether it could open the
// datasets within the deadline. Rank 0 decides from every rank's facts, not
// from its own node only.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "comm/communicator.h"
#include "comm/mpi_runtime.h"
#include "core/device_kind.h"
#include "preflight/checkpoint_directory.h"
#include "preflight/gpu_inventory.h"
#include "preflight/host_memory.h"
#include "preflight/path_probe.h"
#include "preflight/pinned_memory.h"

namespace nss::preflight {

using nss::device_name;
using nss::DeviceKind;

struct DatasetAccess {
  std::string role;  // "train" (data.path) or "eval" (eval.path)
  PathProbe probe;
};

struct RankFacts {
  int rank = 0;
  std::string host;
  int local_rank = 0;
  int local_size = 1;
  int usable_cpus = 1;
  int threads = 1;
  bool cpus_shared = true;       // local ranks share one CPU set
  bool cpu_native_bf16 = false;  // avx512_bf16 or amx_bf16 in /proc/cpuinfo
  HostMemory memory;
  MemlockLimit memlock;  // RLIMIT_MEMLOCK, for offloaded (pinned) optimizer state
  GpuInventory gpus;
  std::vector<DatasetAccess> datasets;
  std::optional<CheckpointDirectoryAccess> checkpoint_dir;  // when asked for
  // model.from_pretrained's config.json as this rank's node sees it, when asked for.
  std::optional<PathProbe> model_config;
};

/// What every rank is asked to find out.
struct FactsRequest {
  DeviceKind device = DeviceKind::kCpu;
  std::vector<std::pair<std::string, std::string>> datasets;  // (role, path)
  std::string checkpoint_dir;                                 // empty: not probed
  std::string model_config;  // model.from_pretrained's config.json; empty: not probed
  double timeout_s = 60;     // per dataset probe, and the checkpoint directory's
  SystemRoot root;
  EnvLookup env = process_environment();
};

/// This rank's facts (no collectives; dataset probes under the deadline).
RankFacts collect_rank_facts(const comm::ProcessLayout& layout, const FactsRequest& request);

/// Every rank's facts in rank order, on every rank (collective).
std::vector<RankFacts> exchange_rank_facts(comm::Communicator& comm, const RankFacts& mine);

/// The GPU a rank uses: local rank modulo the GPUs it sees; nullptr when it sees none.
const GpuDevice* rank_device(const RankFacts& facts);

/// True when /proc/cpuinfo text lists native bf16 instructions.
bool parse_cpu_native_bf16(const std::string& cpuinfo);

/// preflight.json's entry for one rank, and back.
nlohmann::ordered_json facts_to_json(const RankFacts& facts);
RankFacts facts_from_json(const nlohmann::ordered_json& json);

}  // namespace nss::preflight
