#include "preflight/rank_facts.h"

#include <sstream>

#include <spdlog/spdlog.h>

#include "comm/agreement.h"
#include "core/units.h"

namespace nss::preflight {
namespace {

template <class T>
nlohmann::ordered_json optional_json(const std::optional<T>& value) {
  return value ? nlohmann::ordered_json(*value) : nlohmann::ordered_json(nullptr);
}

template <class T>
std::optional<T> optional_from(const nlohmann::ordered_json& json, const char* key) {
  if (!json.contains(key) || json.at(key).is_null()) return std::nullopt;
  return json.at(key).get<T>();
}

nlohmann::ordered_json memory_to_json(const HostMemory& memory) {
  nlohmann::ordered_json limits = nlohmann::ordered_json::array();
  for (const auto& limit : memory.limits)
    limits.push_back({{"source", limit.source}, {"bytes", limit.bytes}, {"detail", limit.detail}});
  return {{"usable_bytes", optional_json(memory.usable_bytes)},
          {"bound_by", memory.bound_by},
          {"limits", limits},
          {"notes", memory.notes}};
}

HostMemory memory_from_json(const nlohmann::ordered_json& json) {
  HostMemory memory;
  memory.usable_bytes = optional_from<std::uint64_t>(json, "usable_bytes");
  memory.bound_by = json.at("bound_by").get<std::string>();
  for (const auto& limit : json.at("limits"))
    memory.limits.push_back({limit.at("source").get<std::string>(),
                             limit.at("bytes").get<std::uint64_t>(),
                             limit.at("detail").get<std::string>()});
  memory.notes = json.at("notes").get<std::vector<std::string>>();
  return memory;
}

nlohmann::ordered_json gpus_to_json(const GpuInventory& gpus) {
  nlohmann::ordered_json devices = nlohmann::ordered_json::array();
  for (const auto& d : gpus.devices)
    devices.push_back({{"index", d.index},
                       {"name", d.name},
                       {"pci_bus_id", d.pci_bus_id},
                       {"compute_capability",
                        std::to_string(d.compute_major) + "." + std::to_string(d.compute_minor)},
                       {"total_bytes", d.total_bytes},
                       {"free_bytes", optional_json(d.free_bytes)}});
  return {{"devices", devices}, {"problem", gpus.problem}};
}

GpuInventory gpus_from_json(const nlohmann::ordered_json& json) {
  GpuInventory gpus;
  gpus.problem = json.at("problem").get<std::string>();
  for (const auto& d : json.at("devices")) {
    GpuDevice device;
    device.index = d.at("index").get<int>();
    device.name = d.at("name").get<std::string>();
    device.pci_bus_id = d.at("pci_bus_id").get<std::string>();
    const std::string capability = d.at("compute_capability").get<std::string>();
    const auto dot = capability.find('.');
    device.compute_major = std::stoi(capability.substr(0, dot));
    device.compute_minor = std::stoi(capability.substr(dot + 1));
    device.total_bytes = d.at("total_bytes").get<std::uint64_t>();
    device.free_bytes = optional_from<std::uint64_t>(d, "free_bytes");
    gpus.devices.push_back(device);
  }
  return gpus;
}

nlohmann::ordered_json path_probe_to_json(const PathProbe& p) {
  return {{"path", p.path},
          {"readable", p.readable},
          {"timed_out", p.timed_out},
          {"problem", p.problem},
          {"hint", p.hint},
          {"seconds", p.seconds},
          {"size_bytes", p.size_bytes},
          {"hdf5_signature", p.hdf5_signature}};
}

PathProbe path_probe_from_json(const nlohmann::ordered_json& json) {
  PathProbe p;
  p.path = json.at("path").get<std::string>();
  p.readable = json.at("readable").get<bool>();
  p.timed_out = json.at("timed_out").get<bool>();
  p.problem = json.at("problem").get<std::string>();
  p.hint = json.at("hint").get<std::string>();
  p.seconds = json.at("seconds").get<double>();
  p.size_bytes = json.at("size_bytes").get<std::uint64_t>();
  p.hdf5_signature = json.at("hdf5_signature").get<bool>();
  return p;
}

nlohmann::ordered_json probe_to_json(const DatasetAccess& access) {
  nlohmann::ordered_json json = {{"role", access.role}};
  json.update(path_probe_to_json(access.probe));
  return json;
}

DatasetAccess probe_from_json(const nlohmann::ordered_json& json) {
  return {json.at("role").get<std::string>(), path_probe_from_json(json)};
}

}  // namespace

bool parse_cpu_native_bf16(const std::string& cpuinfo) {
  std::istringstream lines(cpuinfo);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.compare(0, 5, "flags") != 0) continue;
    std::istringstream flags(line.substr(line.find(':') + 1));
    std::string flag;
    while (flags >> flag)
      if (flag == "avx512_bf16" || flag == "amx_bf16") return true;
    return false;  // every core lists the same flags
  }
  return false;
}

const GpuDevice* rank_device(const RankFacts& facts) {
  if (facts.gpus.devices.empty()) return nullptr;
  const std::size_t count = facts.gpus.devices.size();
  return &facts.gpus.devices[static_cast<std::size_t>(facts.local_rank) % count];
}

RankFacts collect_rank_facts(const comm::ProcessLayout& layout, const FactsRequest& request) {
  RankFacts facts;
  facts.rank = layout.rank;
  facts.host = layout.host;
  facts.local_rank = layout.local_rank;
  facts.local_size = layout.local_size;
  facts.usable_cpus = layout.usable_cpus;
  facts.threads = layout.threads_per_rank;
  facts.cpus_shared = layout.cpus_shared;
  facts.cpu_native_bf16 =
      parse_cpu_native_bf16(read_small_file(request.root.path("/proc/cpuinfo")).value_or(""));
  facts.memory = read_host_memory(request.root, request.env, layout.usable_cpus);
  facts.memlock = read_memlock_limit();

  // Only a GPU run measures free device memory: the query creates a CUDA context.
  const int visible = static_cast<int>(query_gpus(-1).devices.size());
  const int mine =
      request.device == DeviceKind::kCuda && visible > 0 ? layout.local_rank % visible : -1;
  facts.gpus = query_gpus(mine);

  for (const auto& [role, path] : request.datasets)
    facts.datasets.push_back({role, probe_path(path, request.timeout_s)});
  if (!request.checkpoint_dir.empty())
    facts.checkpoint_dir = probe_checkpoint_directory(request.checkpoint_dir, request.timeout_s);
  if (!request.model_config.empty())
    facts.model_config = probe_path(request.model_config, request.timeout_s);

  spdlog::info(
      "[preflight] rank facts: host {}, usable host memory {} (bound by {}), {} CPUs, "
      "{} GPUs",
      facts.host,
      facts.memory.usable_bytes ? format_bytes(*facts.memory.usable_bytes) : std::string("unknown"),
      facts.memory.bound_by.empty() ? "nothing readable" : facts.memory.bound_by, facts.usable_cpus,
      facts.gpus.devices.size());
  if (facts.checkpoint_dir && !facts.checkpoint_dir->writable)
    spdlog::warn("[preflight] checkpoint.dir {} {}", facts.checkpoint_dir->path,
                 facts.checkpoint_dir->problem);
  for (const auto& access : facts.datasets) {
    if (!access.probe.readable)
      spdlog::warn("[preflight] {} dataset {} {}", access.role, access.probe.path,
                   access.probe.problem);
  }
  return facts;
}

std::vector<RankFacts> exchange_rank_facts(comm::Communicator& comm, const RankFacts& mine) {
  std::vector<RankFacts> all;
  for (const auto& text : comm::all_gather_text(comm, facts_to_json(mine).dump()))
    all.push_back(facts_from_json(nlohmann::ordered_json::parse(text)));
  return all;
}

namespace {

// RLIMIT_MEMLOCK in preflight.json: bytes, or null for unlimited.
nlohmann::ordered_json limit_to_json(const std::optional<std::uint64_t>& limit) {
  return limit ? nlohmann::ordered_json(*limit) : nlohmann::ordered_json();
}

std::optional<std::uint64_t> limit_from_json(const nlohmann::ordered_json& json) {
  if (json.is_null()) return std::nullopt;
  return json.get<std::uint64_t>();
}

}  // namespace

nlohmann::ordered_json facts_to_json(const RankFacts& facts) {
  nlohmann::ordered_json datasets = nlohmann::ordered_json::array();
  for (const auto& access : facts.datasets) datasets.push_back(probe_to_json(access));
  return {
      {"rank", facts.rank},
      {"host", facts.host},
      {"local_rank", facts.local_rank},
      {"local_size", facts.local_size},
      {"usable_cpus", facts.usable_cpus},
      {"threads", facts.threads},
      {"cpus_shared", facts.cpus_shared},
      {"cpu_native_bf16", facts.cpu_native_bf16},
      {"host_memory", memory_to_json(facts.memory)},
      {"memlock",
       {{"soft", limit_to_json(facts.memlock.soft)}, {"hard", limit_to_json(facts.memlock.hard)}}},
      {"gpus", gpus_to_json(facts.gpus)},
      {"datasets", datasets},
      {"checkpoint_dir", facts.checkpoint_dir ? checkpoint_access_to_json(*facts.checkpoint_dir)
                                              : nlohmann::ordered_json()},
      {"model_config",
       facts.model_config ? path_probe_to_json(*facts.model_config) : nlohmann::ordered_json()}};
}

RankFacts facts_from_json(const nlohmann::ordered_json& json) {
  RankFacts facts;
  facts.rank = json.at("rank").get<int>();
  facts.host = json.at("host").get<std::string>();
  facts.local_rank = json.at("local_rank").get<int>();
  facts.local_size = json.at("local_size").get<int>();
  facts.usable_cpus = json.at("usable_cpus").get<int>();
  facts.threads = json.at("threads").get<int>();
  facts.cpus_shared = json.at("cpus_shared").get<bool>();
  facts.cpu_native_bf16 = json.at("cpu_native_bf16").get<bool>();
  facts.memory = memory_from_json(json.at("host_memory"));
  if (json.contains("memlock")) {  // absent in reports written before it was collected
    facts.memlock.soft = limit_from_json(json.at("memlock").at("soft"));
    facts.memlock.hard = limit_from_json(json.at("memlock").at("hard"));
  }
  facts.gpus = gpus_from_json(json.at("gpus"));
  for (const auto& access : json.at("datasets")) facts.datasets.push_back(probe_from_json(access));
  if (!json.at("checkpoint_dir").is_null())
    facts.checkpoint_dir = checkpoint_access_from_json(json.at("checkpoint_dir"));
  // Absent in reports written before it was collected.
  if (json.contains("model_config") && !json.at("model_config").is_null())
    facts.model_config = path_probe_from_json(json.at("model_config"));
  return facts;
}

}  // namespace nss::preflight
