// nss_hpc with rank 0 stuck just before it sends the preflight verdict, for
// the end-to-end test that the other ranks leave after
// preflight.verdict_timeout_s instead of hanging. Same job code path as
// nss_hpc (train::run_job); only the test hook differs.
//   preflight_stall_probe CONFIG.yaml [--set key=value]...
#include <chrono>
#include <cstring>
#include <thread>

#include "comm/mpi_app.h"
#include "train/job.h"

int main(int argc, char** argv) {
  return nss::comm::run_mpi_app(argc, argv, [&](int) {
    nss::train::JobOptions options;
    options.config_path = argc > 1 ? argv[1] : "";
    for (int i = 2; i + 1 < argc; i += 2)
      if (std::strcmp(argv[i], "--set") == 0) options.overrides.push_back(argv[i + 1]);
    options.preflight_only = true;
    options.command_line.assign(argv, argv + argc);
    nss::train::JobHooks hooks;
    hooks.before_preflight_verdict = [] { std::this_thread::sleep_for(std::chrono::minutes(10)); };
    return nss::train::run_job(options, hooks);
  });
}
