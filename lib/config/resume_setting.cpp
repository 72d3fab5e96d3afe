#include "config/resume_setting.h"

#include "config/choices.h"

namespace nss::config {

ResumeSetting::ResumeSetting(const std::string& text) {
  if (names_choice(text, "never")) {
    mode_ = Mode::kNever;
  } else if (!names_choice(text, "auto") && !text.empty()) {
    mode_ = Mode::kPath;
    path_ = text;
  }
}

std::string ResumeSetting::text() const {
  switch (mode_) {
    case Mode::kNever:
      return "never";
    case Mode::kPath:
      return path_;
    case Mode::kAuto:
      break;
  }
  return "auto";
}

}  // namespace nss::config
