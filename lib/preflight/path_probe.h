// Looking at a data path before HDF5 touches it. HDF5 holds one global lock
// and opens files with blocking calls, so a FIFO, a socket or a stuck network
// mount would hang it — and with it every later HDF5 call and the exit
// handlers. The probe opens with O_NONBLOCK and checks the file type with
// fstat, so special files fail at once; and it runs on its own thread under a
// deadline, because a stuck mount blocks in the kernel even with O_NONBLOCK.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace nss::preflight {

struct PathProbe {
  std::string path;
  bool readable = false;   // opened, a regular file, first bytes read
  bool timed_out = false;  // did not answer within the deadline
  std::string problem;     // why it is not readable, e.g. "is a FIFO (named pipe)"
  std::string hint;        // what to change
  double seconds = 0;      // how long the probe took (the deadline on timeout)
  std::uint64_t size_bytes = 0;
  bool hdf5_signature = false;  // HDF5 superblock signature at offset 0, 512, 1024, ...
};

/// Opens `path` with O_NONBLOCK, checks it is a regular file and looks for the
/// HDF5 signature. Does not block on special files, but can block in the
/// kernel on a stuck mount: call probe_path for a deadline.
PathProbe inspect_path(const std::string& path);

/// Looks at one path; inspect_path in production.
using PathInspector = std::function<PathProbe(const std::string& path)>;

/// `inspect` (inspect_path) on its own thread, waited on for at most
/// `timeout_s`; on timeout the result says "could not open ... within N s"
/// and the thread is abandoned (core/deadline.h).
PathProbe probe_path(const std::string& path, double timeout_s,
                     const PathInspector& inspect = inspect_path);

}  // namespace nss::preflight
