#include "core/failure.h"

#include <new>

namespace nss {
namespace {

constexpr const char* kMemoryHint =
    "give each process more memory, or make it need less: a smaller "
    "training.micro_batch_size (or the tool's --batch-size / --max-memory), or more ranks "
    "(sharding divides the model and optimizer state)";

// libtorch reports a failed allocation as c10::Error ("CUDA out of memory",
// "DefaultCPUAllocator: not enough memory", libtorch 1.13's "can't allocate
// memory"); this layer does not link it.
bool says_out_of_memory(const std::string& what) {
  return what.find("out of memory") != std::string::npos ||
         what.find("not enough memory") != std::string::npos ||
         what.find("can't allocate memory") != std::string::npos;
}

Failure out_of_memory(std::string message) {
  return {ExitCode::kResources, "memory", std::move(message), kMemoryHint, true, false};
}

Failure unexpected(std::string message) {
  return {ExitCode::kInternal,
          "internal",
          std::move(message),
          "this is a bug or an unexpected failure of a library or the system: report it with the "
          "log",
          false,
          true};
}

}  // namespace

std::string Failure::text() const {
  std::string text = "[" + component + "] " + message;
  if (!hint.empty()) text += "\n  hint: " + hint;
  return text;
}

Failure classify(const std::exception_ptr& error) {
  if (!error) return {};
  try {
    std::rethrow_exception(error);
  } catch (const Error& e) {
    return {e.code(), e.component(), e.message(), e.hint(), false, false};
  } catch (const std::bad_alloc&) {
    return out_of_memory("out of host memory");
  } catch (const std::exception& e) {
    if (says_out_of_memory(e.what())) return out_of_memory(e.what());
    return unexpected(e.what());
  } catch (...) {
    return unexpected("an exception of unknown type");
  }
}

}  // namespace nss
