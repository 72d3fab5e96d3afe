// For the test of slurm/train.sbatch (test_sbatch.py): records which signal
// reaches each rank, so the script's forwarding through srun and mpirun is
// checked rank by rank, independently of nss_hpc's own signal handling.
//
//   signal_probe DIR
//
// Every rank catches SIGUSR1, SIGUSR2 and SIGTERM, writes DIR/rank_N.ready,
// waits (at most 120 s) for one of them, writes its name to DIR/rank_N.signal
// and exits 0; a rank that receives nothing exits 1.
#include <chrono>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <signal.h>
#include <string>
#include <thread>
#include <unistd.h>

#include "comm/mpi_app.h"

namespace {

volatile std::sig_atomic_t g_signal = 0;

void remember(int signal) {
  g_signal = signal;
}

const char* signal_name(int signal) {
  switch (signal) {
    case SIGUSR1:
      return "SIGUSR1";
    case SIGUSR2:
      return "SIGUSR2";
    case SIGTERM:
      return "SIGTERM";
    default:
      return "none";
  }
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path + ".tmp");
  out << text << "\n";
  out.close();
  std::rename((path + ".tmp").c_str(), path.c_str());  // the test never sees half a file
}

}  // namespace

int main(int argc, char** argv) {
  const std::string dir = argc > 1 ? argv[1] : ".";
  struct sigaction action {};
  action.sa_handler = remember;
  sigemptyset(&action.sa_mask);
  for (int signal : {SIGUSR1, SIGUSR2, SIGTERM}) sigaction(signal, &action, nullptr);

  return nss::comm::run_mpi_app(argc, argv, [&](int rank) {
    const std::string prefix = dir + "/rank_" + std::to_string(rank);
    write_text(prefix + ".ready", std::to_string(::getpid()));
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while (g_signal == 0 && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    write_text(prefix + ".signal", signal_name(g_signal));
    return g_signal == 0 ? nss::ExitCode::kInternal : nss::ExitCode::kOk;
  });
}
