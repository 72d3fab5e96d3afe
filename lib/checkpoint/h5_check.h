// lib/checkpoint's HDF5 check: NSS_H5_CHECK throws CheckpointError (exit 5)
// with HDF5's own error text and file:line. Owning ids and element types are
// lib/h5's, shared with lib/data.
#pragma once

#include <string>

#include "h5/id.h"
#include "h5/types.h"

namespace nss::checkpoint {

/// Throws CheckpointError "[checkpoint] <call> failed on <subject>: <HDF5 error
/// stack>" when `status` is negative (HDF5's failure convention).
void check_h5(long long status, const char* call, const std::string& subject, const char* file,
              int line);

/// Turns off HDF5's automatic error printing for the calling thread (the
/// thread-safe build keeps one error stack per thread); errors are reported
/// through exceptions instead.
void silence_h5_errors();

/// File-access property list; `file_locking` false disables HDF5's file locks
/// (parallel file systems where flock fails).
h5::Id file_access_properties(bool file_locking);

}  // namespace nss::checkpoint

#define NSS_H5_CHECK(call, subject) \
  ::nss::checkpoint::check_h5(static_cast<long long>(call), #call, (subject), __FILE__, __LINE__)
