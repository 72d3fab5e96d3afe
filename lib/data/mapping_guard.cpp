#include "data/mapping_guard.h"

#include <atomic>
#include <csignal>
#include <pthread.h>
#include <setjmp.h>

namespace nss::data {
namespace {

struct GuardedCopy {
  sigjmp_buf jump;
  const char* begin;
  const char* end;
};

// The copy this thread is running, if any. Initial-exec TLS: the handler reads
// it with a plain load, never through __tls_get_addr (which may allocate and is
// not async-signal-safe).
[[gnu::tls_model("initial-exec")]] thread_local GuardedCopy* t_guarded = nullptr;

struct sigaction g_previous;  // SIGBUS's disposition before ours

void on_sigbus(int signal, siginfo_t* info, void*) {
  GuardedCopy* const guarded = t_guarded;
  const char* const address = static_cast<const char*>(info->si_addr);
  // si_code > 0: raised by the kernel for a fault, not sent with kill().
  if (guarded && info->si_code > 0 && address >= guarded->begin && address < guarded->end)
    siglongjmp(guarded->jump, 1);
  // Not a guarded copy: put the previous disposition back and let it act. A
  // fault re-executes its instruction and meets it; a signal sent with kill()
  // is raised again and stays pending until this handler returns.
  sigaction(signal, &g_previous, nullptr);
  if (info->si_code <= 0) raise(signal);
}

bool install_handler() {
  sigaction(SIGBUS, nullptr, &g_previous);
  struct sigaction action {};
  action.sa_sigaction = on_sigbus;
  action.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&action.sa_mask);
  sigaction(SIGBUS, &action, nullptr);
  return true;
}

// siglongjmp leaves the handler without returning, so SIGBUS stays blocked in
// this thread (sigsetjmp did not save the mask: that would cost a system call
// on every copy). A SIGBUS fault while blocked kills the process outright.
void unblock_sigbus() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGBUS);
  pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
}

}  // namespace

bool copy_from_mapping(const void* begin, std::size_t bytes, void (*copy)(void* state),
                       void* state) {
  [[maybe_unused]] static const bool installed = install_handler();
  GuardedCopy guarded;
  guarded.begin = static_cast<const char*>(begin);
  guarded.end = guarded.begin + bytes;
  GuardedCopy* const outer = t_guarded;
  if (sigsetjmp(guarded.jump, 0) != 0) {
    t_guarded = outer;
    unblock_sigbus();
    return false;
  }
  t_guarded = &guarded;
  // The handler runs on this thread: keep the stores on either side of the copy.
  std::atomic_signal_fence(std::memory_order_seq_cst);
  copy(state);
  std::atomic_signal_fence(std::memory_order_seq_cst);
  t_guarded = outer;
  return true;
}

}  // namespace nss::data
