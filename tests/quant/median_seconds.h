// The NF4 benchmarks' timer: the median wall time of five runs.
#pragma once

#include <algorithm>
#include <chrono>
#include <vector>

namespace nss::quant::bench {

template <typename F>
double median_seconds(F&& run) {
  using Clock = std::chrono::steady_clock;
  std::vector<double> times;
  for (int r = 0; r < 5; ++r) {
    const auto start = Clock::now();
    run();
    times.push_back(std::chrono::duration<double>(Clock::now() - start).count());
  }
  std::sort(times.begin(), times.end());
  return times[2];
}

}  // namespace nss::quant::bench
