#include "checkpoint/h5_check.h"

#include <string>

#include "core/error.h"
#include "h5/errors.h"

namespace nss::checkpoint {

void check_h5(long long status, const char* call, const std::string& subject, const char* file,
              int line) {
  if (status >= 0) return;
  throw CheckpointError("checkpoint", h5::failure_message(call, subject, file, line));
}

void silence_h5_errors() {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
}

h5::Id file_access_properties(bool file_locking) {
  h5::Id fapl(H5Pcreate(H5P_FILE_ACCESS));
  NSS_H5_CHECK(fapl.get(), "a file-access property list");
  // ignore_when_disabled: also succeed where the file system has no locks at all.
  NSS_H5_CHECK(H5Pset_file_locking(fapl.get(), file_locking ? 1 : 0, 1),
               "a file-access property list");
  return fapl;
}

}  // namespace nss::checkpoint
