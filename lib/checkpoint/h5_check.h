// HDF5 C API helpers: a check macro that throws CheckpointError with HDF5's own
// error text and file:line, and an owning handle that closes any HDF5 id.
#pragma once

#include <string>
#include <utility>

#include <hdf5.h>

#include "core/dtype.h"

namespace nss::checkpoint {

/// Throws CheckpointError "[checkpoint] <call> failed for <subject>: <HDF5 error
/// stack>" when `status` is negative (HDF5's failure convention).
void check_h5(long long status, const char* call, const std::string& subject, const char* file,
              int line);

/// Turns off HDF5's automatic error printing for the calling thread (the
/// thread-safe build keeps one error stack per thread); errors are reported
/// through exceptions instead.
void silence_h5_errors();

/// Owns one HDF5 identifier and closes it with the matching H5*close.
class H5Id {
 public:
  H5Id() = default;
  explicit H5Id(hid_t id) : id_(id) {}
  ~H5Id() { reset(); }
  H5Id(H5Id&& other) noexcept : id_(std::exchange(other.id_, H5I_INVALID_HID)) {}
  H5Id& operator=(H5Id&& other) noexcept {
    if (this != &other) {
      reset();
      id_ = std::exchange(other.id_, H5I_INVALID_HID);
    }
    return *this;
  }
  H5Id(const H5Id&) = delete;
  H5Id& operator=(const H5Id&) = delete;

  hid_t get() const { return id_; }
  bool valid() const { return id_ >= 0; }
  /// Closes now; returns false when HDF5 reports a failure (e.g. a flush that hit a full disk).
  bool close();
  void reset() { close(); }

 private:
  hid_t id_ = H5I_INVALID_HID;
};

/// File-access property list; `file_locking` false disables HDF5's file locks
/// (parallel file systems where flock fails).
H5Id file_access_properties(bool file_locking);

/// HDF5 type used in shard files for `dtype` (little-endian; 16-bit floats are
/// stored as uint16 with a "dtype" attribute, since HDF5 1.10 has no such type).
hid_t h5_file_type(DType dtype);

/// Native in-memory HDF5 type with the same bytes as `dtype`.
hid_t h5_memory_type(DType dtype);

}  // namespace nss::checkpoint

#define NSS_H5_CHECK(call, subject) \
  ::nss::checkpoint::check_h5(static_cast<long long>(call), #call, (subject), __FILE__, __LINE__)
