// Typed errors and the process exit codes they map to (docs/operations.md).
//
// Library code throws; only apps/ catch and turn an Error into an exit code.
// Every message names the component ("[config] ...") and, where the user can
// fix something, carries a hint that says what to change.
#pragma once

#include <stdexcept>
#include <string>

namespace nss {

enum class ExitCode : int {
  kOk = 0,
  kInternal = 1,           // a bug or an unexpected system failure
  kUsage = 2,              // command line, configuration, batch arithmetic
  kResources = 3,          // preflight no-go on memory or time
  kData = 4,               // dataset or model files missing, unreadable or invalid
  kCheckpoint = 5,         // cannot resume and no valid fallback; another configuration
  kCollectiveTimeout = 6,  // a collective did not finish in time
  kStopped = 7,            // SIGTERM/SIGINT, checkpoint saved
  kRequeue = 75,           // SIGUSR1 (time limit near), checkpoint saved: requeue
};

/// Short name of an exit code ("usage", "data", ...), for messages.
const char* exit_code_name(ExitCode code);

/// Base of every error nss_hpc throws on purpose.
class Error : public std::runtime_error {
 public:
  Error(ExitCode code, std::string component, std::string message, std::string hint = {});

  ExitCode code() const { return code_; }
  const std::string& component() const { return component_; }
  const std::string& message() const { return message_; }
  const std::string& hint() const { return hint_; }

 private:
  ExitCode code_;
  std::string component_;
  std::string message_;
  std::string hint_;
};

/// Bad command line, configuration value or batch arithmetic (exit 2).
struct UsageError : Error {
  UsageError(std::string component, std::string message, std::string hint = {})
      : Error(ExitCode::kUsage, std::move(component), std::move(message), std::move(hint)) {}
};

/// The job does not fit the resources it was given (exit 3).
struct ResourceError : Error {
  ResourceError(std::string component, std::string message, std::string hint = {})
      : Error(ExitCode::kResources, std::move(component), std::move(message), std::move(hint)) {}
};

/// Missing, unreadable or invalid data or model files (exit 4).
struct DataError : Error {
  DataError(std::string component, std::string message, std::string hint = {})
      : Error(ExitCode::kData, std::move(component), std::move(message), std::move(hint)) {}
};

/// A checkpoint cannot be written or resumed from (exit 5).
struct CheckpointError : Error {
  CheckpointError(std::string component, std::string message, std::string hint = {})
      : Error(ExitCode::kCheckpoint, std::move(component), std::move(message), std::move(hint)) {}
};

/// A bug or an unexpected failure of a library or the system (exit 1).
struct InternalError : Error {
  InternalError(std::string component, std::string message, std::string hint = {})
      : Error(ExitCode::kInternal, std::move(component), std::move(message), std::move(hint)) {}
};

/// "file.cpp:42", for check macros.
std::string source_location(const char* file, int line);

}  // namespace nss

/// Internal invariant: throws InternalError with file:line when `cond` is false.
#define NSS_ASSERT(cond, component, message)                                                       \
  do {                                                                                             \
    if (!(cond))                                                                                   \
      throw ::nss::InternalError(component, std::string(message) + " (" #cond " failed at " +      \
                                                ::nss::source_location(__FILE__, __LINE__) + ")"); \
  } while (0)
