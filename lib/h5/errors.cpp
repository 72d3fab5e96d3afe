#include "h5/errors.h"

#include <vector>

#include "core/error.h"

namespace nss::h5 {
namespace {

// The POSIX driver's entries dump its whole call (time, file name, buffer,
// offsets, errno); what a user needs is the system's reason.
std::string concise(const std::string& description) {
  const std::string key = "error message = '";
  const auto found = description.find(key);
  if (found == std::string::npos) return description;
  const auto start = found + key.size();
  const auto end = description.find('\'', start);
  return description.substr(0, description.find_first_of(":,")) + ": " +
         description.substr(start, end == std::string::npos ? end : end - start);
}

herr_t collect_description(unsigned /*n*/, const H5E_error2_t* entry, void* data) {
  auto* descriptions = static_cast<std::vector<std::string>*>(data);
  if (entry->desc && *entry->desc) {
    std::string text = concise(entry->desc);
    if (descriptions->empty() || descriptions->back() != text) descriptions->push_back(text);
  }
  return 0;
}

}  // namespace

QuietErrors::QuietErrors() {
  H5Eget_auto2(H5E_DEFAULT, &saved_function_, &saved_data_);
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
}

QuietErrors::~QuietErrors() {
  H5Eset_auto2(H5E_DEFAULT, saved_function_, saved_data_);
}

std::string take_error_text() {
  std::vector<std::string> descriptions;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, collect_description, &descriptions);
  H5Eclear2(H5E_DEFAULT);
  std::string text;
  for (const auto& d : descriptions) text += (text.empty() ? "" : "; ") + d;
  return text.empty() ? "no HDF5 error text" : text;
}

void leave_open_files_to_the_kernel_at_exit() {
  H5dont_atexit();
}

std::string failure_message(const char* call, const std::string& subject, const char* file,
                            int line) {
  std::string name(call);
  const auto paren = name.find('(');
  if (paren != std::string::npos) name.erase(paren);
  return name + " failed on " + subject + ": " + take_error_text() + " (" +
         source_location(file, line) + ")";
}

}  // namespace nss::h5
