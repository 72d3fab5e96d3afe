#include "core/app_main.h"

#include <cstdio>
#include <exception>
#include <new>

namespace nss {
namespace {

int report(const std::string& name, ExitCode code, const std::string& text) {
  std::fflush(stdout);
  std::fprintf(stderr, "%s: error: %s\n", name.c_str(), text.c_str());
  std::fflush(stderr);
  return static_cast<int>(code);
}

}  // namespace

int run_app(const std::string& name, const std::function<ExitCode()>& body) {
  try {
    const ExitCode code = body();
    std::fflush(stdout);
    return static_cast<int>(code);
  } catch (const Error& e) {
    return report(name, e.code(), e.what());
  } catch (const std::bad_alloc&) {
    return report(name, ExitCode::kResources, "[memory] out of host memory");
  } catch (const std::exception& e) {
    return report(name, ExitCode::kInternal, std::string("[internal] ") + e.what());
  }
}

}  // namespace nss
