#include "train/run_identity.h"

#include <cstdio>
#include <filesystem>
#include <random>

#include "core/error.h"
#include "core/fs.h"
#include "core/host_and_time.h"

namespace nss::train {
namespace {

constexpr const char* kRunIdFile = "run_id";

std::string new_run_id() {
  std::random_device entropy;
  const unsigned long long bits = (static_cast<unsigned long long>(entropy()) << 32) ^ entropy();
  char id[64];
  std::snprintf(id, sizeof id, "%s-%016llx", utc_stamp().c_str(), bits);
  return id;
}

}  // namespace

std::string run_identity(const std::string& run_dir) {
  const std::string path = run_dir + "/" + kRunIdFile;
  std::error_code ec;
  if (std::filesystem::exists(path, ec)) {
    std::string id;
    try {
      id = read_text_file(path, "run");
    } catch (const Error& e) {
      throw UsageError("run", e.message(),
                       "make " + path + " a readable file, as the run wrote it");
    }
    while (!id.empty() && (id.back() == '\n' || id.back() == ' ')) id.pop_back();
    if (id.empty() || id.find_first_of(" \n\"") != std::string::npos)
      throw UsageError("run", path + " does not hold a run id",
                       "it was edited; restore it, or remove it to give the run a new identity "
                       "(its checkpoints then count as another run's)");
    return id;
  }
  const std::string id = new_run_id();
  write_file_atomic(path, id + "\n");
  return id;
}

}  // namespace nss::train
