// The one mapping from an exception to what the process does about it: the
// exit code of docs/operations.md and the message's parts. Every place that
// catches "anything" (the tools' mains, agreement points, the preflight's
// verdict and checks, the asynchronous checkpoint writer, the synthetic
// step) classifies here, so an out-of-memory failure reads the same
// wherever it happens.
#pragma once

#include <exception>
#include <string>

#include "core/error.h"

namespace nss {

struct Failure {
  ExitCode code = ExitCode::kOk;
  std::string component, message, hint;
  /// A failed allocation (std::bad_alloc, or a library's out-of-memory error).
  bool out_of_memory = false;
  /// Not an nss::Error nor an allocation failure: a bug or a library's surprise.
  bool unexpected = false;

  /// "[component] message", and the hint on a second line (as Error::what()).
  std::string text() const;
};

/// nss::Error: its own code and parts. std::bad_alloc, and a library's error
/// that says it ran out of memory (libtorch's CPU and CUDA allocators): exit
/// 3 with one hint. Any other exception: exit 1, its text as the message. A
/// null pointer: kOk.
Failure classify(const std::exception_ptr& error);

}  // namespace nss
