// Agreement points: places where every rank must leave with the same exit
// code and message (configuration, preflight verdict, step boundaries).
#pragma once

#include <exception>
#include <functional>
#include <string>
#include <vector>

#include "comm/communicator.h"
#include "core/error.h"

namespace nss::comm {

/// An error every rank holds identically; apps print it on rank 0 only and
/// exit normally (no MPI_Abort) with its code.
struct AgreedError : Error {
  AgreedError(ExitCode code, std::string component, std::string message, std::string hint)
      : Error(code, std::move(component), std::move(message), std::move(hint)) {}
};

/// Runs `work` on `root` only; if it throws, every rank throws the same AgreedError.
void run_on_root(Communicator& comm, int root, const std::function<void()>& work);

/// Runs `work` on every rank; if any rank throws, every rank throws the
/// AgreedError of the lowest failing rank.
void run_on_all(Communicator& comm, const std::function<void()>& work);

/// Copies `text` from `root` to every rank.
void broadcast_text(Communicator& comm, std::string& text, int root);

/// Every rank's `text`, in rank order, on every rank.
std::vector<std::string> all_gather_text(Communicator& comm, const std::string& text);

}  // namespace nss::comm
