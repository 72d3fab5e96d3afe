#include "core/deadline.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>

namespace nss {
namespace {

std::atomic<int> g_abandoned{0};

// Shared by the caller and the worker; the worker's copy keeps it alive after
// the caller has given up.
struct Completion {
  std::mutex mutex;
  std::condition_variable done_cv;
  bool done = false;
  std::exception_ptr error;
};

}  // namespace

bool run_with_deadline(double timeout_s, std::function<void()> work) {
  auto completion = std::make_shared<Completion>();
  std::thread worker([completion, work = std::move(work)] {
    std::exception_ptr error;
    try {
      work();
    } catch (...) {
      error = std::current_exception();
    }
    std::lock_guard<std::mutex> lock(completion->mutex);
    completion->error = error;
    completion->done = true;
    completion->done_cv.notify_all();
  });

  std::unique_lock<std::mutex> lock(completion->mutex);
  const bool finished = completion->done_cv.wait_for(lock, std::chrono::duration<double>(timeout_s),
                                                     [&] { return completion->done; });
  lock.unlock();
  if (!finished) {
    // Joining could block forever (the thread may sit in an uninterruptible
    // system call); it keeps its own reference to `completion`.
    worker.detach();
    ++g_abandoned;
    return false;
  }
  worker.join();
  if (completion->error) std::rethrow_exception(completion->error);
  return true;
}

int abandoned_threads() {
  return g_abandoned.load();
}

}  // namespace nss
