// An owning HDF5 identifier: closed with the H5*close that matches its kind
// (file, group, dataset, dataspace, datatype, attribute, property list).
#pragma once

#include <utility>

#include <hdf5.h>

namespace nss::h5 {

class Id {
 public:
  Id() = default;
  explicit Id(hid_t id) : id_(id) {}
  ~Id() { reset(); }
  Id(Id&& other) noexcept : id_(std::exchange(other.id_, H5I_INVALID_HID)) {}
  Id& operator=(Id&& other) noexcept {
    if (this != &other) {
      reset();
      id_ = std::exchange(other.id_, H5I_INVALID_HID);
    }
    return *this;
  }
  Id(const Id&) = delete;
  Id& operator=(const Id&) = delete;

  hid_t get() const { return id_; }
  bool valid() const { return id_ >= 0; }
  /// Closes now and returns HDF5's status: negative when it failed (e.g. a
  /// file flush that hit a full disk), with the reason on the error stack.
  herr_t close();
  /// Closes now, quietly ignoring a failure (destructors, error paths).
  void reset();

 private:
  hid_t id_ = H5I_INVALID_HID;
};

}  // namespace nss::h5
