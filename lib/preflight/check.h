// One preflight check's record, as it appears in preflight.json and the log
// table: what was checked, how it came out, the numbers behind it, and what to
// change. A check that cannot run is `skipped` with the reason in `message`,
// never left out.
#pragma once

#include <optional>
#include <string>

#include "core/error.h"

namespace nss::preflight {

enum class CheckStatus { kPass, kWarn, kFail, kSkipped };

/// "pass", "warn", "fail", "skipped".
const char* status_name(CheckStatus status);

struct Check {
  std::string id;  // dotted, e.g. "dataloader.host_memory"
  CheckStatus status = CheckStatus::kPass;
  ExitCode code = ExitCode::kOk;  // category when it fails: 2 layout, 3 resources, 4 data
  std::string message;            // one line: the finding, or why it was skipped
  std::optional<double> predicted;
  std::optional<double> measured;
  std::optional<double> threshold;
  std::string unit;         // "bytes", "s", "threads", ...
  std::string remediation;  // what to change; empty on pass

  /// A passing check of category `code`.
  static Check pass(std::string id, ExitCode code, std::string message);
  /// A warning (no-go only with preflight.fail_on_warning).
  static Check warn(std::string id, ExitCode code, std::string message, std::string remediation);
  /// A failure: the job is no-go with `code`.
  static Check fail(std::string id, ExitCode code, std::string message, std::string remediation);
  /// A check that could not run; `reason` says why.
  static Check skipped(std::string id, ExitCode code, std::string reason);

  /// Sets predicted/measured/threshold and unit; returns *this for chaining.
  Check& with_numbers(std::optional<double> predicted_value, std::optional<double> measured_value,
                      std::optional<double> threshold_value, std::string unit_name);
};

}  // namespace nss::preflight
