#include "preflight/report.h"

#include "core/failure.h"

namespace nss::preflight {
namespace {

std::size_t count(const std::vector<Check>& checks, CheckStatus status) {
  std::size_t n = 0;
  for (const auto& check : checks) n += check.status == status ? 1 : 0;
  return n;
}

std::string plural(std::size_t n, const char* word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

Verdict no_go(const Check& deciding, std::size_t others, const std::string& suffix) {
  Verdict verdict;
  verdict.go = false;
  verdict.code = deciding.code == ExitCode::kOk ? ExitCode::kInternal : deciding.code;
  verdict.reason = "no-go: [" + deciding.id + "] " + deciding.message + suffix;
  if (others > 0) verdict.reason += " (+" + plural(others, "more problem") + " in preflight.json)";
  verdict.hint = deciding.remediation;
  return verdict;
}

}  // namespace

void PreflightReport::add(Check check) {
  checks_.push_back(std::move(check));
}

void PreflightReport::run_guarded(const std::string& id, const std::function<void()>& body) {
  try {
    body();
  } catch (...) {
    const Failure failure = classify(std::current_exception());
    add(Check::fail(id, failure.code,
                    failure.unexpected ? "unexpected error: " + failure.message
                                       : "[" + failure.component + "] " + failure.message,
                    failure.hint));
  }
}

const Check* PreflightReport::find(const std::string& id) const {
  for (const auto& check : checks_)
    if (check.id == id) return &check;
  return nullptr;
}

bool PreflightReport::usable(const std::string& id) const {
  const Check* check = find(id);
  return check && (check->status == CheckStatus::kPass || check->status == CheckStatus::kWarn);
}

Verdict PreflightReport::verdict(bool fail_on_warning) const {
  const std::size_t failures = count(checks_, CheckStatus::kFail);
  const std::size_t warnings = count(checks_, CheckStatus::kWarn);
  for (const auto& check : checks_)
    if (check.status == CheckStatus::kFail) return no_go(check, failures - 1, "");
  if (fail_on_warning && warnings > 0) {
    for (const auto& check : checks_)
      if (check.status == CheckStatus::kWarn)
        return no_go(check, warnings - 1, " (a warning; preflight.fail_on_warning is true)");
  }
  Verdict verdict;
  verdict.reason = "go: " + plural(count(checks_, CheckStatus::kPass), "check") + " passed, " +
                   plural(warnings, "warning") + ", " +
                   std::to_string(count(checks_, CheckStatus::kSkipped)) + " skipped";
  return verdict;
}

}  // namespace nss::preflight
