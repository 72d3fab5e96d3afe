// Work that must finish within a deadline even when it blocks in the kernel
// (a stuck network mount, a FIFO): it runs on its own thread, the caller waits
// at most the deadline, and on timeout the thread is abandoned — never joined.
//
// An abandoned thread may hold locks (HDF5's global lock, say) that exit
// handlers need, so processes that abandoned one leave through std::_Exit
// after flushing (comm/mpi_app.cpp checks abandoned_threads()).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <utility>

namespace nss {

/// Runs `work` on a new thread and waits at most `timeout_s` seconds. Returns
/// true when it finished (rethrowing what it threw), false on timeout. After a
/// timeout `work` outlives the caller's frame: capture by value, never by reference.
bool run_with_deadline(double timeout_s, std::function<void()> work);

/// Like run_with_deadline, returning `work()`'s value, or nullopt on timeout.
template <class Work>
auto call_with_deadline(double timeout_s, Work work) -> std::optional<decltype(work())> {
  using Value = decltype(work());
  auto slot = std::make_shared<std::optional<Value>>();
  const bool finished = run_with_deadline(
      timeout_s, [slot, work = std::move(work)]() mutable { slot->emplace(work()); });
  if (!finished) return std::nullopt;
  return std::move(*slot);
}

/// Threads abandoned by a timed-out run_with_deadline in this process.
int abandoned_threads();

}  // namespace nss
