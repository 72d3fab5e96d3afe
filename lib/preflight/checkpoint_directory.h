// Whether a rank can write into checkpoint.dir, and how much room its file
// system has, found out before any training step. Every rank writes its own
// file of every save, so every rank probes: it creates the directory, writes,
// fsyncs and removes a small probe file, and reads the free space. The probe
// runs under a deadline, since a stuck mount blocks in the kernel.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace nss::preflight {

struct CheckpointDirectoryAccess {
  std::string path;
  bool writable = false;
  bool timed_out = false;
  std::string problem;                      // why it is not writable
  std::optional<std::uint64_t> free_bytes;  // for an unprivileged user (statvfs f_bavail)
  double seconds = 0;
};

/// Probes `path` on this rank within `timeout_s`.
CheckpointDirectoryAccess probe_checkpoint_directory(const std::string& path, double timeout_s);

nlohmann::ordered_json checkpoint_access_to_json(const CheckpointDirectoryAccess& access);
CheckpointDirectoryAccess checkpoint_access_from_json(const nlohmann::ordered_json& json);

}  // namespace nss::preflight
