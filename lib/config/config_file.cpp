#include "config/config_file.h"

#include <cerrno>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/error.h"
#include "core/fs.h"

namespace nss::config {
namespace {

// Far beyond any configuration (configs/run.yaml is under 1 KiB); a larger
// file is the wrong one, and is not read into memory.
constexpr off_t kMaxConfigBytes = off_t{1} << 20;

constexpr const char* kExample = "pass the path of a YAML file, e.g. configs/run.yaml";

[[noreturn]] void cannot_read(const std::string& path, int error) {
  throw UsageError("config", "cannot read config file " + path + ": " + errno_text(error),
                   kExample);
}

}  // namespace

std::string read_config_file(const std::string& path) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer; the descriptor's
  // type is checked before anything is read from it.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) cannot_read(path, errno);
  const FileDescriptor file(fd);
  struct stat info {};
  if (::fstat(file.get(), &info) != 0) cannot_read(path, errno);
  if (!S_ISREG(info.st_mode))
    throw UsageError(
        "config", "config file " + path + " is " + file_kind(info.st_mode) + ", not a regular file",
        kExample);
  if (info.st_size > kMaxConfigBytes)
    throw UsageError("config",
                     "config file " + path + " is " + std::to_string(info.st_size) +
                         " bytes, more than a configuration (at most " +
                         std::to_string(kMaxConfigBytes) + ")",
                     kExample);
  std::string text;
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::read(file.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) cannot_read(path, errno);
    if (n == 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
  }
  return text;
}

}  // namespace nss::config
