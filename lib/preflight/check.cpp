#include "preflight/check.h"

namespace nss::preflight {
namespace {

Check make(std::string id, CheckStatus status, ExitCode code, std::string message,
           std::string remediation) {
  Check check;
  check.id = std::move(id);
  check.status = status;
  check.code = code;
  check.message = std::move(message);
  check.remediation = std::move(remediation);
  return check;
}

}  // namespace

const char* status_name(CheckStatus status) {
  switch (status) {
    case CheckStatus::kPass:
      return "pass";
    case CheckStatus::kWarn:
      return "warn";
    case CheckStatus::kFail:
      return "fail";
    case CheckStatus::kSkipped:
      return "skipped";
  }
  return "unknown";
}

Check Check::pass(std::string id, ExitCode code, std::string message) {
  return make(std::move(id), CheckStatus::kPass, code, std::move(message), {});
}

Check Check::warn(std::string id, ExitCode code, std::string message, std::string remediation) {
  return make(std::move(id), CheckStatus::kWarn, code, std::move(message), std::move(remediation));
}

Check Check::fail(std::string id, ExitCode code, std::string message, std::string remediation) {
  return make(std::move(id), CheckStatus::kFail, code, std::move(message), std::move(remediation));
}

Check Check::skipped(std::string id, ExitCode code, std::string reason) {
  return make(std::move(id), CheckStatus::kSkipped, code, std::move(reason), {});
}

Check& Check::with_numbers(std::optional<double> predicted_value,
                           std::optional<double> measured_value,
                           std::optional<double> threshold_value, std::string unit_name) {
  predicted = predicted_value;
  measured = measured_value;
  threshold = threshold_value;
  unit = std::move(unit_name);
  return *this;
}

}  // namespace nss::preflight
