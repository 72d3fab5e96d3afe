#include "preflight/path_probe.h"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <sys/stat.h>
#include <unistd.h>

#include "core/deadline.h"
#include "core/fs.h"

namespace nss::preflight {
namespace {

constexpr unsigned char kHdf5Signature[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};

std::string where_relative_paths_point() {
  std::error_code error;
  const auto cwd = std::filesystem::current_path(error);
  return error ? std::string() : " (relative paths start at " + cwd.string() + ")";
}

std::string kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "is a directory";
  if (S_ISFIFO(mode)) return "is a FIFO (named pipe), not a file";
  if (S_ISSOCK(mode)) return "is a socket, not a file";
  if (S_ISCHR(mode)) return "is a character device, not a file";
  if (S_ISBLK(mode)) return "is a block device, not a file";
  return "is not a regular file";
}

// The superblock may follow a user block of 512 x 2^k bytes.
bool has_hdf5_signature(int fd, std::uint64_t size) {
  for (std::uint64_t offset = 0; offset + sizeof kHdf5Signature <= size;
       offset = offset == 0 ? 512 : offset * 2) {
    unsigned char bytes[sizeof kHdf5Signature];
    if (::pread(fd, bytes, sizeof bytes, static_cast<off_t>(offset)) !=
        static_cast<ssize_t>(sizeof bytes))
      return false;
    if (std::memcmp(bytes, kHdf5Signature, sizeof bytes) == 0) return true;
  }
  return false;
}

void describe_open_error(PathProbe& probe, int error) {
  probe.problem = "cannot open: " + errno_text(error);
  switch (error) {
    case ENOENT:
      probe.problem = "does not exist";
      probe.hint = "check data.path" + where_relative_paths_point() +
                   "; build a dataset with nss_prepare_data";
      break;
    case EACCES:
      probe.hint = "make the file readable by the user the job runs as";
      break;
    case ENXIO:
      probe.problem = "is a socket or a device without a reader, not a file";
      probe.hint = "point data.path at a token HDF5 file";
      break;
    default:
      probe.hint = "check that the path and its file system are reachable from every node";
  }
}

}  // namespace

PathProbe inspect_path(const std::string& path) {
  const auto start = std::chrono::steady_clock::now();
  PathProbe probe;
  probe.path = path;
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    describe_open_error(probe, errno);
  } else {
    struct stat info {};
    if (::fstat(fd, &info) != 0) {
      probe.problem = "cannot stat: " + errno_text(errno);
      probe.hint = "check the file system holding the dataset";
    } else if (!S_ISREG(info.st_mode)) {
      probe.problem = kind_of(info.st_mode);
      probe.hint = "point data.path at a token HDF5 file (a regular file)";
    } else {
      probe.size_bytes = static_cast<std::uint64_t>(info.st_size);
      probe.hdf5_signature = has_hdf5_signature(fd, probe.size_bytes);
      probe.readable = true;
    }
    ::close(fd);
  }
  probe.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return probe;
}

PathProbe probe_path(const std::string& path, double timeout_s, const PathInspector& inspect) {
  if (auto probe = call_with_deadline(timeout_s, [path, inspect] { return inspect(path); }))
    return *probe;
  PathProbe probe;
  probe.path = path;
  probe.timed_out = true;
  probe.seconds = timeout_s;
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%g", timeout_s);
  probe.problem = std::string("could not open within ") + seconds +
                  " s (preflight.first_batch_timeout_s); its file system does not answer";
  probe.hint =
      "check the mount holding the dataset on this node (a hung network file system?), or "
      "copy the data to a local or parallel file system";
  return probe;
}

}  // namespace nss::preflight
