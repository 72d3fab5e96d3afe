#include "comm/stop_signal.h"

#include <csignal>
#include <cstdint>
#include <mutex>

namespace nss::comm {
namespace {

volatile std::sig_atomic_t g_request = 0;

extern "C" void on_stop_signal(int signal) {
  const std::sig_atomic_t request = signal == SIGUSR1 ? 1 : 2;
  if (request > g_request) g_request = request;
}

}  // namespace

void install_stop_signal_handlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction action {};
    action.sa_handler = &on_stop_signal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;  // a signal must not fail a read or an MPI call
    for (int signal : {SIGINT, SIGTERM, SIGUSR1, SIGUSR2}) sigaction(signal, &action, nullptr);
  });
}

StopRequest local_stop_request() {
  return static_cast<StopRequest>(static_cast<int>(g_request));
}

StopRequest agree_on_stop_request(comm::Communicator& comm) {
  std::int32_t request = static_cast<std::int32_t>(local_stop_request());
  comm::CollectiveLabel label(comm, "stop-signal agreement");
  comm.all_reduce(&request, 1, comm::ReduceOp::kMax);
  return static_cast<StopRequest>(request);
}

ExitCode exit_code_for(StopRequest request) {
  switch (request) {
    case StopRequest::kRequeue:
      return ExitCode::kRequeue;
    case StopRequest::kTerminate:
      return ExitCode::kStopped;
    case StopRequest::kNone:
      break;
  }
  return ExitCode::kOk;
}

const char* describe(StopRequest request) {
  switch (request) {
    case StopRequest::kRequeue:
      return "SIGUSR1 (time limit near)";
    case StopRequest::kTerminate:
      return "SIGTERM/SIGINT";
    case StopRequest::kNone:
      break;
  }
  return "no signal";
}

}  // namespace nss::comm
