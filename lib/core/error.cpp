#include "core/error.h"

#include <cstring>

namespace nss {
namespace {

std::string compose(const std::string& component, const std::string& message,
                    const std::string& hint) {
  std::string text = "[" + component + "] " + message;
  if (!hint.empty()) text += "\n  hint: " + hint;
  return text;
}

}  // namespace

const char* exit_code_name(ExitCode code) {
  switch (code) {
    case ExitCode::kOk:
      return "ok";
    case ExitCode::kInternal:
      return "internal error";
    case ExitCode::kUsage:
      return "usage/configuration error";
    case ExitCode::kResources:
      return "insufficient resources";
    case ExitCode::kData:
      return "data error";
    case ExitCode::kCheckpoint:
      return "checkpoint error";
    case ExitCode::kCollectiveTimeout:
      return "collective timeout";
    case ExitCode::kStopped:
      return "stopped by signal";
    case ExitCode::kRequeue:
      return "stopped for requeue";
  }
  return "unknown";
}

Error::Error(ExitCode code, std::string component, std::string message, std::string hint)
    : std::runtime_error(compose(component, message, hint)),
      code_(code),
      component_(std::move(component)),
      message_(std::move(message)),
      hint_(std::move(hint)) {}

std::string source_location(const char* file, int line) {
  const char* base = std::strrchr(file, '/');
  return std::string(base ? base + 1 : file) + ":" + std::to_string(line);
}

}  // namespace nss
