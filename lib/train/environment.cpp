#include "train/environment.h"

#include <cstring>
#include <ctime>
#include <set>

#include <mpi.h>
#include <nlohmann/json.hpp>
#include <spdlog/version.h>
#include <torch/version.h>

#include "core/build_info.h"

extern char** environ;

namespace nss::train {
namespace {

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return text;
}

std::string mpi_library() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  MPI_Get_library_version(text, &length);
  std::string version(text, static_cast<std::size_t>(length));
  const auto newline = version.find_first_of("\n,");
  return newline == std::string::npos ? version : version.substr(0, newline);
}

// Launcher and runtime variables worth keeping: Slurm, Open MPI/PMIx rank
// variables, thread and device selection, NCCL tuning.
bool worth_recording(const std::string& name) {
  static const char* kPrefixes[] = {
      "SLURM_", "OMPI_COMM_WORLD_", "PMIX_RANK", "PMI_", "NCCL_", "CUDA_VISIBLE_DEVICES",
      "OMP_",   "OPENBLAS_",        "MKL_",      "UCX_"};
  for (const char* prefix : kPrefixes)
    if (name.compare(0, std::strlen(prefix), prefix) == 0) return true;
  return false;
}

}  // namespace

std::string describe_rank(const comm::ProcessLayout& layout, const std::string& device) {
  nlohmann::json entry = {{"rank", layout.rank},
                          {"host", layout.host},
                          {"local_rank", layout.local_rank},
                          {"local_size", layout.local_size},
                          {"usable_cpus", layout.usable_cpus},
                          {"cpus_shared_with_local_ranks", layout.cpus_shared},
                          {"threads", layout.threads_per_rank},
                          {"device", device}};
  return entry.dump();
}

std::string describe_environment(const std::vector<std::string>& rank_entries,
                                 const std::vector<std::string>& command_line) {
  nlohmann::json ranks = nlohmann::json::array();
  std::set<std::string> hosts;
  for (const auto& text : rank_entries) {
    auto entry = nlohmann::json::parse(text);
    hosts.insert(entry["host"].get<std::string>());
    ranks.push_back(std::move(entry));
  }
  nlohmann::json variables = nlohmann::json::object();
  for (char** var = environ; var && *var; ++var) {
    const std::string item(*var);
    const auto eq = item.find('=');
    if (eq != std::string::npos && worth_recording(item.substr(0, eq)))
      variables[item.substr(0, eq)] = item.substr(eq + 1);
  }
  nlohmann::json doc = {
      {"nss_hpc", {{"version", build_version()}, {"git_revision", build_git_revision()}}},
      {"started_utc", utc_now()},
      {"command_line", command_line},
      {"world_size", rank_entries.size()},
      {"hosts", std::vector<std::string>(hosts.begin(), hosts.end())},
      {"ranks", ranks},
      {"libraries",
       {{"mpi", mpi_library()},
        {"libtorch", TORCH_VERSION},
        {"spdlog", std::to_string(SPDLOG_VER_MAJOR) + "." + std::to_string(SPDLOG_VER_MINOR) + "." +
                       std::to_string(SPDLOG_VER_PATCH)}}},
      {"compiler", __VERSION__},
      {"environment", variables},
  };
  return doc.dump(2) + "\n";
}

}  // namespace nss::train
