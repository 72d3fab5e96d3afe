// accountant_probe: lib/privacy's accountants for test_accountants_reference.py.
//   accountant_probe epsilon    reads "q sigma steps delta" lines on stdin and
//                               prints "q sigma steps delta rdp_eps rdp_order
//                               prv_lower prv_estimate prv_upper prv_grid
//                               prv_seconds" for each (a failing case prints
//                               "error: ..." in place of its PRV columns)
//   accountant_probe calibrate KIND Q STEPS DELTA TARGET
//                               prints "sigma epsilon seconds"
#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>

#include "core/error.h"
#include "privacy/accountant.h"

namespace {

using namespace nss::privacy;

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void epsilon_table() {
  double q, sigma, delta;
  std::int64_t steps;
  while (std::cin >> q >> sigma >> steps >> delta) {
    const RdpEpsilon rdp = rdp_epsilon(q, sigma, steps, delta);
    std::printf("%.17g %.17g %lld %.17g %.17g %.17g", q, sigma, static_cast<long long>(steps),
                delta, rdp.epsilon, rdp.order);
    const auto start = std::chrono::steady_clock::now();
    try {
      const PrvEpsilon prv = prv_epsilon(q, sigma, steps, delta);
      std::printf(" %.17g %.17g %.17g %lld %.4f\n", prv.lower, prv.estimate, prv.upper,
                  static_cast<long long>(prv.grid_points), seconds_since(start));
    } catch (const nss::UsageError& e) {
      std::printf(" error: %s\n", e.message().c_str());
    }
    std::fflush(stdout);
  }
}

void calibrate(char** argv) {
  const AccountantKind kind = parse_accountant_kind(argv[0]);
  const double q = std::stod(argv[1]), delta = std::stod(argv[3]), target = std::stod(argv[4]);
  const std::int64_t steps = std::stoll(argv[2]);
  const auto start = std::chrono::steady_clock::now();
  const double sigma = calibrate_noise_multiplier(kind, q, steps, delta, target);
  const double seconds = seconds_since(start);
  std::printf("%.17g %.17g %.4f\n", sigma, epsilon(kind, q, sigma, steps, delta), seconds);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  try {
    if (mode == "epsilon" && argc == 2) {
      epsilon_table();
      return 0;
    }
    if (mode == "calibrate" && argc == 7) {
      calibrate(argv + 2);
      return 0;
    }
  } catch (const nss::Error& e) {
    std::fprintf(stderr, "accountant_probe: %s\n", e.what());
    return 2;
  }
  std::fprintf(stderr,
               "usage: accountant_probe epsilon < CASES\n"
               "       accountant_probe calibrate rdp|prv Q STEPS DELTA TARGET\n");
  return 2;
}
