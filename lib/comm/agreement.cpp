#include "comm/agreement.h"

#include <algorithm>

#include "core/failure.h"

namespace nss::comm {
namespace {

std::exception_ptr capture(const std::function<void()>& work) {
  try {
    work();
  } catch (...) {
    return std::current_exception();
  }
  return nullptr;
}

constexpr char kSeparator = '\x1f';

std::string encode(const Failure& o) {
  return std::to_string(static_cast<int>(o.code)) + kSeparator + o.component + kSeparator +
         o.message + kSeparator + o.hint;
}

[[noreturn]] void throw_decoded(const std::string& text) {
  std::vector<std::string> parts(1);
  for (char c : text) {
    if (c == kSeparator)
      parts.emplace_back();
    else
      parts.back() += c;
  }
  parts.resize(4);
  throw AgreedError(static_cast<ExitCode>(std::stoi(parts[0])), parts[1], parts[2], parts[3]);
}

// Shares the outcome of the lowest failing rank (or of nobody) with everyone.
void settle(Communicator& comm, const Failure& mine) {
  std::int32_t first_failure = mine.code == ExitCode::kOk ? comm.size() : comm.rank();
  comm.all_reduce(&first_failure, 1, ReduceOp::kMin);
  if (first_failure == comm.size()) return;
  std::string text = comm.rank() == first_failure ? encode(mine) : std::string();
  broadcast_text(comm, text, first_failure);
  throw_decoded(text);
}

}  // namespace

void run_on_root(Communicator& comm, int root, const std::function<void()>& work) {
  Failure mine;
  if (comm.rank() == root) mine = classify(capture(work));
  std::int32_t code = static_cast<std::int32_t>(mine.code);
  comm.broadcast(&code, 1, root);
  if (code == 0) return;
  std::string text = comm.rank() == root ? encode(mine) : std::string();
  broadcast_text(comm, text, root);
  throw_decoded(text);
}

void run_on_all(Communicator& comm, const std::function<void()>& work) {
  settle(comm, classify(capture(work)));
}

void broadcast_text(Communicator& comm, std::string& text, int root) {
  std::uint64_t length = text.size();
  comm.broadcast(&length, 1, root);
  text.resize(length);
  comm.broadcast(text.data(), length, DType::kUInt8, root);
}

std::vector<std::string> all_gather_text(Communicator& comm, const std::string& text) {
  const std::size_t n = static_cast<std::size_t>(comm.size());
  std::vector<std::uint64_t> lengths(n);
  std::uint64_t mine = text.size();
  comm.all_gather(&mine, lengths.data(), 1, DType::kUInt64);
  const std::uint64_t longest = *std::max_element(lengths.begin(), lengths.end());
  std::string padded = text;
  padded.resize(longest);
  std::string all(longest * n, '\0');
  comm.all_gather(padded.data(), all.data(), longest, DType::kUInt8);
  std::vector<std::string> out;
  for (std::size_t r = 0; r < n; ++r) out.push_back(all.substr(r * longest, lengths[r]));
  return out;
}

}  // namespace nss::comm
