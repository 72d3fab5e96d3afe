#include "preflight/verdict_channel.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

#include "comm/mpi_check.h"

namespace nss::preflight {
namespace {

constexpr auto kPoll = std::chrono::milliseconds(10);

template <std::size_t N>
void copy_text(char (&field)[N], const std::string& text) {
  const std::size_t n = std::min(text.size(), N - 1);
  std::memcpy(field, text.data(), n);
  field[n] = '\0';
}

}  // namespace

VerdictChannel::VerdictChannel(MPI_Comm world, int root) : root_(root) {
  NSS_MPI_CHECK(MPI_Comm_dup(world, &comm_));
  MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
  NSS_MPI_CHECK(MPI_Comm_rank(comm_, &rank_));
}

VerdictChannel::~VerdictChannel() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  // A collective cannot be cancelled: if the verdict never came, MPI may still
  // write into the message, so it stays allocated (the job is ending anyway).
  if (posted_ && request_ != MPI_REQUEST_NULL) {
    message_.release();
    return;
  }
  MPI_Comm_free(&comm_);
}

void VerdictChannel::send(const Verdict& verdict) {
  NSS_ASSERT(rank_ == root_, "preflight", "only the root rank sends the verdict");
  message_->go = verdict.go ? 1 : 0;
  message_->code = static_cast<std::int32_t>(verdict.code);
  copy_text(message_->reason, verdict.reason);
  copy_text(message_->hint, verdict.hint);
  NSS_MPI_CHECK(MPI_Ibcast(message_.get(), sizeof(Message), MPI_BYTE, root_, comm_, &request_));
  posted_ = true;
  NSS_MPI_CHECK(MPI_Wait(&request_, MPI_STATUS_IGNORE));
}

std::optional<Verdict> VerdictChannel::receive(double timeout_s) {
  NSS_ASSERT(rank_ != root_, "preflight",
             "the root rank sends the verdict, it does not receive it");
  if (!posted_) {
    NSS_MPI_CHECK(MPI_Ibcast(message_.get(), sizeof(Message), MPI_BYTE, root_, comm_, &request_));
    posted_ = true;
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (request_ != MPI_REQUEST_NULL) {
    int done = 0;
    NSS_MPI_CHECK(MPI_Test(&request_, &done, MPI_STATUS_IGNORE));
    if (done) break;
    if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(kPoll);
  }
  Verdict verdict;
  verdict.go = message_->go != 0;
  verdict.code = static_cast<ExitCode>(message_->code);
  verdict.reason = message_->reason;
  verdict.hint = message_->hint;
  return verdict;
}

}  // namespace nss::preflight
