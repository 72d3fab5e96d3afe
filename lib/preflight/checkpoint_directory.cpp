#include "preflight/checkpoint_directory.h"

#include <cerrno>
#include <chrono>
#include <fcntl.h>
#include <filesystem>
#include <string>
#include <sys/statvfs.h>
#include <unistd.h>

#include "core/deadline.h"
#include "core/fs.h"
#include "core/host_and_time.h"

namespace nss::preflight {
namespace {

// A probe the size of an HDF5 superblock and a little data: enough to meet
// ENOSPC, EDQUOT and a file-size limit of zero, small enough to cost nothing.
constexpr std::size_t kProbeBytes = 4096;

// Empty when the probe file could be written, synced and removed; else why not.
std::string write_probe(const std::string& directory) {
  const std::string path =
      directory + "/.nss_hpc_probe." + host_name() + "." + std::to_string(::getpid());
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return "cannot create a file in it: " + errno_text(errno);
  const std::string bytes(kProbeBytes, '\0');
  std::string problem;
  const ssize_t written = ::write(fd, bytes.data(), bytes.size());
  if (written != static_cast<ssize_t>(bytes.size()))
    problem = "cannot write a file in it: " +
              (written < 0 ? errno_text(errno) : std::string("short write (file size limit?)"));
  else if (::fsync(fd) != 0)
    problem = "cannot sync a file in it: " + errno_text(errno);
  if (::close(fd) != 0 && problem.empty())
    problem = "cannot close a file in it: " + errno_text(errno);
  if (::unlink(path.c_str()) != 0 && problem.empty())
    problem = "cannot remove a file in it: " + errno_text(errno);
  return problem;
}

CheckpointDirectoryAccess inspect(const std::string& path) {
  CheckpointDirectoryAccess access;
  access.path = path;
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec) {
    access.problem = "cannot be created: " + ec.message();
    return access;
  }
  if (!std::filesystem::is_directory(path, ec)) {
    access.problem = "is not a directory";
    return access;
  }
  access.problem = write_probe(path);
  access.writable = access.problem.empty();
  struct statvfs fs {};
  if (::statvfs(path.c_str(), &fs) == 0)
    access.free_bytes = static_cast<std::uint64_t>(fs.f_bavail) * fs.f_frsize;
  return access;
}

}  // namespace

CheckpointDirectoryAccess probe_checkpoint_directory(const std::string& path, double timeout_s) {
  const auto start = std::chrono::steady_clock::now();
  auto result = call_with_deadline(timeout_s, [path] { return inspect(path); });
  if (!result) {
    CheckpointDirectoryAccess access;
    access.path = path;
    access.timed_out = true;
    access.problem = "did not answer within " + std::to_string(static_cast<long>(timeout_s)) +
                     " s (a stuck file system?)";
    access.seconds = timeout_s;
    return access;
  }
  result->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return *result;
}

nlohmann::ordered_json checkpoint_access_to_json(const CheckpointDirectoryAccess& access) {
  return {{"path", access.path},
          {"writable", access.writable},
          {"timed_out", access.timed_out},
          {"problem", access.problem},
          {"free_bytes", access.free_bytes ? nlohmann::ordered_json(*access.free_bytes)
                                           : nlohmann::ordered_json()},
          {"seconds", access.seconds}};
}

CheckpointDirectoryAccess checkpoint_access_from_json(const nlohmann::ordered_json& json) {
  CheckpointDirectoryAccess access;
  access.path = json.at("path").get<std::string>();
  access.writable = json.at("writable").get<bool>();
  access.timed_out = json.at("timed_out").get<bool>();
  access.problem = json.at("problem").get<std::string>();
  if (!json.at("free_bytes").is_null())
    access.free_bytes = json.at("free_bytes").get<std::uint64_t>();
  access.seconds = json.at("seconds").get<double>();
  return access;
}

}  // namespace nss::preflight
