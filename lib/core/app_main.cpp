#include "core/app_main.h"

#include <cstdio>

#include "core/failure.h"
#include "core/temporary_files.h"

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
  remove_temporaries_on_termination();
  try {
    const ExitCode code = body();
    std::fflush(stdout);
    return static_cast<int>(code);
  } catch (...) {
    const Failure failure = classify(std::current_exception());
    return report(name, failure.code, failure.text());
  }
}

}  // namespace nss
