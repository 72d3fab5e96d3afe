// Small HDF5 helpers: NSS_H5_CHECK, which turns a failed HDF5 call into a
// DataError that carries HDF5's own error text, the file concerned and the
// source line; an owning handle for HDF5 ids; attribute read/write.
//
// HDF5 prints its error stack to stderr by default; NSS_H5_CHECK silences that
// for the call (the text goes into the exception instead).
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>

#include <hdf5.h>

namespace nss::data {

/// Turns HDF5's automatic error printing off for this thread while alive.
class H5QuietErrors {
 public:
  H5QuietErrors();
  ~H5QuietErrors();
  H5QuietErrors(const H5QuietErrors&) = delete;
  H5QuietErrors& operator=(const H5QuietErrors&) = delete;

 private:
  H5E_auto2_t saved_function_ = nullptr;
  void* saved_data_ = nullptr;
};

/// Throws DataError "[data] <call> failed on <context>: <HDF5 error stack> (file:line)".
[[noreturn]] void throw_h5_error(const char* call, const std::string& context, const char* file,
                                 int line);

/// Runs `call` with HDF5's printing off; throws when it returns a negative value.
template <class Call>
auto h5_checked(Call&& call, const char* text, const std::string& context, const char* file,
                int line) {
  H5QuietErrors quiet;
  auto result = call();
  using Result = decltype(result);
  if constexpr (std::is_enum_v<Result>) {
    if (static_cast<std::underlying_type_t<Result>>(result) < 0)
      throw_h5_error(text, context, file, line);
  } else {
    static_assert(std::is_signed_v<Result>,
                  "NSS_H5_CHECK needs a call that signals failure with a negative value");
    if (result < 0) throw_h5_error(text, context, file, line);
  }
  return result;
}

/// An HDF5 id that is closed when the handle goes away (move-only).
class H5Handle {
 public:
  using Closer = herr_t (*)(hid_t);

  H5Handle() = default;
  H5Handle(hid_t id, Closer close) : id_(id), close_(close) {}
  ~H5Handle() { reset(); }
  H5Handle(H5Handle&& other) noexcept
      : id_(std::exchange(other.id_, H5I_INVALID_HID)), close_(other.close_) {}
  H5Handle& operator=(H5Handle&& other) noexcept;
  H5Handle(const H5Handle&) = delete;
  H5Handle& operator=(const H5Handle&) = delete;

  /// The raw id, for HDF5 calls.
  hid_t get() const { return id_; }
  /// Closes the id now, ignoring errors (destructors, error paths).
  void reset();
  /// Closes the id now and throws when HDF5 reports a failure (e.g. a file flush).
  void close_checked(const std::string& context);

 private:
  hid_t id_ = H5I_INVALID_HID;
  Closer close_ = nullptr;
};

/// True when `object` has an attribute called `name`.
bool has_attribute(hid_t object, const char* name, const std::string& context);

/// Reads a string attribute (fixed- or variable-length, as h5py writes it).
std::string read_string_attribute(hid_t object, const char* name, const std::string& context);

/// Reads an integer attribute of any integer width as int64.
std::int64_t read_int_attribute(hid_t object, const char* name, const std::string& context);

/// Writes a variable-length UTF-8 string attribute (h5py reads it as str).
void write_string_attribute(hid_t object, const char* name, const std::string& value,
                            const std::string& context);

/// Writes a scalar little-endian int64 attribute.
void write_int_attribute(hid_t object, const char* name, std::int64_t value,
                         const std::string& context);

}  // namespace nss::data

/// NSS_H5_CHECK(call, context): the call's result, or a DataError naming
/// `context` (usually the file), HDF5's error text and this source line.
#define NSS_H5_CHECK(call, context) \
  ::nss::data::h5_checked([&]() { return (call); }, #call, (context), __FILE__, __LINE__)
