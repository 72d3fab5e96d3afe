#include "checkpoint/async_saver.h"

#include <chrono>
#include <cstring>

#include <spdlog/spdlog.h>

#include "comm/agreement.h"
#include "core/failure.h"

namespace nss::checkpoint {
namespace {

std::uint64_t packed_bytes(const ShardBuffer& buffer) {
  std::uint64_t elements = 0;
  for (const auto& piece : buffer.pieces) elements += piece.length;
  return elements * dtype_size(buffer.dtype);
}

}  // namespace

AsyncCheckpointer::AsyncCheckpointer(std::unique_ptr<comm::Communicator> writer_comm,
                                     SnapshotMode mode)
    : writer_comm_(std::move(writer_comm)), mode_(mode) {}

AsyncCheckpointer::~AsyncCheckpointer() {
  if (!in_flight()) return;
  const auto outcome = wait();
  if (outcome && !outcome->committed)
    spdlog::error("[checkpoint] the last asynchronous save (step {}) failed: {}", outcome->step,
                  outcome->error);
}

std::uint64_t AsyncCheckpointer::staging_bytes() const {
  std::uint64_t bytes = 0;
  for (const auto& s : staging_) bytes += s.bytes;
  return bytes;
}

void AsyncCheckpointer::reserve_staging(const std::vector<ShardBuffer>& buffers) {
  NSS_ASSERT(!in_flight(), "checkpoint", "reserve_staging() while a save is in flight");
  if (mode_ != SnapshotMode::kCallerSnapshot) allocate_staging(buffers);
}

void AsyncCheckpointer::allocate_staging(const std::vector<ShardBuffer>& buffers) {
  staging_.resize(buffers.size());
  for (std::size_t i = 0; i < buffers.size(); ++i) {
    const std::uint64_t bytes = packed_bytes(buffers[i]);
    if (staging_[i].bytes == bytes) continue;
    staging_[i].data.reset(new char[bytes]);
    staging_[i].bytes = bytes;
    // Touch every page now, so the first snapshot does not pay the page faults.
    std::memset(staging_[i].data.get(), 0, bytes);
  }
}

void AsyncCheckpointer::stage(const std::vector<ShardBuffer>& buffers) {
  allocate_staging(buffers);
  staged_.clear();
  for (std::size_t i = 0; i < buffers.size(); ++i) {
    const ShardBuffer& source = buffers[i];
    const std::size_t esize = dtype_size(source.dtype);
    ShardBuffer staged{source.dataset, source.dtype, staging_[i].data.get(), 0, {}};
    for (const auto& piece : source.pieces) {
      if (piece.buffer_offset + piece.length > source.count)
        throw UsageError("checkpoint",
                         "piece of " + piece.tensor + " lies beyond buffer " + source.dataset,
                         "this is a bug in the caller's shard description");
      std::memcpy(static_cast<char*>(staged.data) + staged.count * esize,
                  static_cast<const char*>(source.data) + piece.buffer_offset * esize,
                  piece.length * esize);
      staged.pieces.push_back({piece.tensor, piece.tensor_offset, piece.length, staged.count});
      staged.count += piece.length;
    }
    staged_.push_back(std::move(staged));
  }
}

AsyncSaveStart AsyncCheckpointer::save(const SaveRequest& request,
                                       const std::vector<ShardBuffer>& buffers) {
  const auto start = std::chrono::steady_clock::now();
  AsyncSaveStart started;
  if (in_flight()) started.previous = wait();
  switch (mode_) {
    case SnapshotMode::kCopyInSave:
      stage(buffers);
      break;
    case SnapshotMode::kOverlapped:
      sources_ = buffers;
      snapshot_taken_ = false;
      break;
    case SnapshotMode::kCallerSnapshot:
      staged_ = buffers;
      break;
  }
  request_ = request;
  outcome_ = AsyncSaveOutcome{};
  outcome_.step = request.step;
  finished_.store(false);
  thread_ = std::thread([this] { run_writer(); });
  started.blocking_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  blocking_seconds_ = started.blocking_seconds;
  return started;
}

void AsyncCheckpointer::mark_snapshot_taken() {
  {
    std::lock_guard<std::mutex> lock(snapshot_mutex_);
    snapshot_taken_ = true;
  }
  snapshot_taken_cv_.notify_all();
}

double AsyncCheckpointer::snapshot_fence() {
  const auto start = std::chrono::steady_clock::now();
  std::unique_lock<std::mutex> lock(snapshot_mutex_);
  snapshot_taken_cv_.wait(lock, [this] { return snapshot_taken_; });
  const double waited =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  blocking_seconds_ += waited;
  return waited;
}

void AsyncCheckpointer::run_writer() {
  try {
    if (mode_ == SnapshotMode::kOverlapped) {
      // Whatever happens, the caller may go on once the copy is over; whether
      // every rank staged is then agreed before any collective of the save.
      std::exception_ptr staging_error;
      try {
        stage(sources_);
      } catch (...) {
        staging_error = std::current_exception();
      }
      sources_.clear();
      mark_snapshot_taken();
      comm::run_on_all(*writer_comm_, [&] {
        if (staging_error) std::rethrow_exception(staging_error);
      });
    }
    outcome_.result = save_checkpoint(*writer_comm_, request_, staged_);
    outcome_.committed = true;
  } catch (...) {
    Failure failure = classify(std::current_exception());
    if (failure.out_of_memory) failure.message += " while saving a checkpoint";
    outcome_.code = failure.code;
    outcome_.error = failure.text();
  }
  finished_.store(true, std::memory_order_release);
}

std::optional<AsyncSaveOutcome> AsyncCheckpointer::poll(comm::Communicator& training_comm) {
  std::int32_t done = !in_flight() || finished_.load(std::memory_order_acquire) ? 1 : 0;
  training_comm.all_reduce(&done, 1, comm::ReduceOp::kMin);
  if (!in_flight() || done == 0) return std::nullopt;
  return wait();
}

std::optional<AsyncSaveOutcome> AsyncCheckpointer::wait() {
  if (!in_flight()) return std::nullopt;
  thread_.join();
  mark_snapshot_taken();
  outcome_.result.blocking_seconds = blocking_seconds_;
  return outcome_;
}

}  // namespace nss::checkpoint
