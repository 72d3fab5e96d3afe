#include "support/test_paths.h"

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <unistd.h>

namespace nss::testing {

std::string scratch_dir(const std::string& tag) {
  static std::atomic<int> counter{0};
  const char* tmp = std::getenv("TMPDIR");
  const std::filesystem::path base = tmp ? tmp : "/tmp";
  const auto dir = base / ("nss_test_" + tag + "_" + std::to_string(::getpid()) + "_" +
                           std::to_string(counter++));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

std::string source_dir() {
  const char* dir = std::getenv("NSS_SOURCE_DIR");
  return dir ? dir : ".";
}

}  // namespace nss::testing
