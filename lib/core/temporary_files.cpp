#include "core/temporary_files.h"

#include <atomic>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <mutex>
#include <sys/syscall.h>
#include <unistd.h>

#include <climits>

namespace nss {
namespace {

constexpr int kSlots = 64;

// The handler reads these without locks: a slot's path and kind are complete
// before its flag is set, and the flag is cleared before they are reused.
char g_paths[kSlots][PATH_MAX];
TemporaryClaim::Kind g_kinds[kSlots];
std::atomic<bool> g_claimed[kSlots];
std::mutex g_claiming;

// Only async-signal-safe calls: the directory is read with getdents64.
void remove_flat_directory(const char* path) {
  const int fd = ::open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    alignas(8) char entries[4096];
    long bytes;
    while ((bytes = ::syscall(SYS_getdents64, fd, entries, sizeof entries)) > 0) {
      for (long at = 0; at < bytes;) {
        const char* entry = entries + at;
        unsigned short length;
        std::memcpy(&length, entry + 16, sizeof length);  // d_reclen after d_ino, d_off
        const char* name = entry + 19;                    // after d_type
        if (std::strcmp(name, ".") != 0 && std::strcmp(name, "..") != 0) ::unlinkat(fd, name, 0);
        at += length;
      }
    }
    ::close(fd);
  }
  ::rmdir(path);
}

extern "C" void remove_claimed_and_end(int signal_number) {
  for (const auto kind : {TemporaryClaim::Kind::kFile, TemporaryClaim::Kind::kFlatDirectory})
    for (int i = 0; i < kSlots; ++i) {
      if (!g_claimed[i].load(std::memory_order_acquire) || g_kinds[i] != kind) continue;
      if (kind == TemporaryClaim::Kind::kFile)
        ::unlink(g_paths[i]);
      else
        remove_flat_directory(g_paths[i]);
    }
  std::signal(signal_number, SIG_DFL);
  std::raise(signal_number);
}

}  // namespace

TemporaryClaim::TemporaryClaim(const std::string& path, Kind kind) {
  if (path.size() >= PATH_MAX) return;
  const std::lock_guard<std::mutex> lock(g_claiming);
  for (int i = 0; i < kSlots; ++i) {
    if (g_claimed[i].load(std::memory_order_acquire)) continue;
    std::memcpy(g_paths[i], path.c_str(), path.size() + 1);
    g_kinds[i] = kind;
    g_claimed[i].store(true, std::memory_order_release);
    slot_ = i;
    return;
  }
}

void TemporaryClaim::release() {
  if (slot_ < 0) return;
  const std::lock_guard<std::mutex> lock(g_claiming);
  g_claimed[slot_].store(false, std::memory_order_release);
  slot_ = -1;
}

void remove_temporaries_on_termination() {
  for (const int signal_number : {SIGINT, SIGTERM, SIGHUP}) {
    // A signal the tool was started ignoring (nohup, a background job's
    // SIGINT) stays ignored: it would not have ended the tool before either.
    struct sigaction current {};
    if (::sigaction(signal_number, nullptr, &current) == 0 && current.sa_handler == SIG_IGN)
      continue;
    std::signal(signal_number, remove_claimed_and_end);
  }
}

}  // namespace nss
