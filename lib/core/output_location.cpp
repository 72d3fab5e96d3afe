#include "core/output_location.h"

#include "core/fs.h"

namespace nss {

UsageError output_location_error(const std::string& component, const std::string& message) {
  return UsageError(component, message,
                    "write to an existing, writable directory with room for the output (check "
                    "the path, its permissions, free space with df -h and the file-size limit "
                    "with ulimit -f), or choose another --output");
}

UsageError output_location_error(const std::string& component, const std::string& action,
                                 const std::string& path, int error_number) {
  return output_location_error(component,
                               "cannot " + action + " " + path + ": " + errno_text(error_number));
}

void write_output_file(const std::string& path, const std::string& content,
                       const std::string& component) {
  try {
    write_file_atomic(path, content);
  } catch (const InternalError& e) {
    // write_file_atomic names the call, the file and the errno text.
    throw output_location_error(component, e.message());
  }
}

}  // namespace nss
