#include "log/tool_app.h"

#include <cstdio>
#include <new>
#include <string>

#include <spdlog/spdlog.h>

#include "log/logger.h"

namespace nss::log {

int run_tool_app(int argc, char** argv, const std::function<ExitCode()>& body) {
  std::string program = argc > 0 ? argv[0] : "nss_tool";
  program.erase(0, program.rfind('/') + 1);
  init(0);
  const auto fail = [&](ExitCode code, const std::string& text) {
    flush();
    std::fprintf(stderr, "%s: error: %s\n", program.c_str(), text.c_str());
    return static_cast<int>(code);
  };
  try {
    const ExitCode code = body();
    flush();
    return static_cast<int>(code);
  } catch (const Error& e) {
    return fail(e.code(), e.what());
  } catch (const std::bad_alloc&) {
    return fail(ExitCode::kResources, "[memory] out of host memory");
  } catch (const std::exception& e) {
    return fail(ExitCode::kInternal, std::string("[internal] ") + e.what());
  }
}

}  // namespace nss::log
