// Items 0, 1, 2, ... produced by worker threads and handed out strictly in
// index order through a bounded ring of slots. What an item holds depends only
// on its index, so the stream is the same whatever the thread timing; a
// producer's exception is re-thrown to the consumer when it reaches that item.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace nss::data {

template <class T>
class OrderedPrefetcher {
 public:
  using Produce = std::function<T(std::int64_t index)>;

  /// `workers` threads fill at most `capacity` (>= workers) slots ahead of the
  /// consumer; with 0 workers next() produces on the caller's thread.
  OrderedPrefetcher(std::int64_t workers, std::int64_t capacity, Produce produce)
      : produce_(std::move(produce)),
        capacity_(workers > 0 ? capacity : 0),
        slots_(static_cast<std::size_t>(capacity_)) {
    threads_.reserve(static_cast<std::size_t>(workers));
    for (std::int64_t w = 0; w < workers; ++w) threads_.emplace_back([this] { work(); });
  }

  /// Stops the workers (each finishes the item in hand) and joins them.
  ~OrderedPrefetcher() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    space_.notify_all();
    for (auto& thread : threads_) thread.join();
  }

  OrderedPrefetcher(const OrderedPrefetcher&) = delete;
  OrderedPrefetcher& operator=(const OrderedPrefetcher&) = delete;

  /// The next item in index order; re-throws the exception that producing it
  /// raised (again on every later call: the stream cannot go past it).
  T next() {
    if (threads_.empty()) {
      T item = produce_(delivered_);
      ++delivered_;
      return item;
    }
    std::unique_lock<std::mutex> lock(mutex_);
    Slot& slot = slots_[static_cast<std::size_t>(delivered_ % capacity_)];
    ready_.wait(lock, [&] { return slot.index == delivered_; });
    if (slot.error) std::rethrow_exception(slot.error);
    T item = std::move(*slot.item);
    slot.item.reset();
    slot.index = -1;
    ++delivered_;
    lock.unlock();
    space_.notify_all();
    return item;
  }

  /// Items handed out so far.
  std::int64_t delivered() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return delivered_;
  }

 private:
  struct Slot {
    std::int64_t index = -1;
    std::optional<T> item;
    std::exception_ptr error;
  };

  void work() {
    for (;;) {
      std::int64_t index = 0;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        // A slot is free once the item `capacity_` places earlier was taken.
        space_.wait(lock,
                    [&] { return stopping_ || failed_ || claimed_ < delivered_ + capacity_; });
        if (stopping_ || failed_) return;
        index = claimed_++;
      }
      Slot slot;
      slot.index = index;
      try {
        slot.item.emplace(produce_(index));
      } catch (...) {
        slot.error = std::current_exception();
      }
      const bool failed = static_cast<bool>(slot.error);
      {
        std::lock_guard<std::mutex> lock(mutex_);
        if (failed) failed_ = true;  // the stream ends there: claim nothing more
        slots_[static_cast<std::size_t>(index % capacity_)] = std::move(slot);
      }
      ready_.notify_all();
      if (failed) space_.notify_all();
    }
  }

  Produce produce_;
  const std::int64_t capacity_;
  mutable std::mutex mutex_;
  std::condition_variable space_;
  std::condition_variable ready_;
  std::vector<Slot> slots_;
  std::int64_t claimed_ = 0;
  std::int64_t delivered_ = 0;
  bool stopping_ = false;
  bool failed_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace nss::data
