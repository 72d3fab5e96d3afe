// A process that abandons a thread stuck in the kernel while holding a lock
// its exit handlers need (as HDF5's global lock would be, behind a hung file
// system), then ends with exit code 4. The end-to-end test checks that it
// leaves promptly: the exit path must not wait for the abandoned thread.
#include <cstdlib>
#include <mutex>
#include <unistd.h>

#include "comm/mpi_app.h"
#include "core/deadline.h"

namespace {

std::mutex g_library_lock;

void library_exit_handler() {
  std::lock_guard<std::mutex> lock(g_library_lock);
}

}  // namespace

int main(int argc, char** argv) {
  std::atexit(library_exit_handler);
  return nss::comm::run_mpi_app(argc, argv, [&](int) {
    const bool finished = nss::run_with_deadline(0.2, [] {
      std::lock_guard<std::mutex> lock(g_library_lock);
      int fds[2];
      if (::pipe(fds) == 0) {
        char byte;
        (void)::read(fds[0], &byte, 1);
      }
    });
    return finished ? nss::ExitCode::kOk : nss::ExitCode::kData;
  });
}
