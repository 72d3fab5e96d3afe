// lib/data's HDF5 check: NSS_H5_CHECK turns a failed HDF5 call into a
// DataError (exit 4) that carries HDF5's own error text, the file concerned
// and the source line; attribute read/write. Owning ids are lib/h5's.
//
// HDF5 prints its error stack to stderr by default; NSS_H5_CHECK silences that
// for the call (the text goes into the exception instead).
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>

#include <hdf5.h>

#include "h5/errors.h"
#include "h5/id.h"

namespace nss::data {

/// Throws DataError "[data] <call> failed on <context>: <HDF5 error stack> (file:line)".
[[noreturn]] void throw_h5_error(const char* call, const std::string& context, const char* file,
                                 int line);

/// Runs `call` with HDF5's printing off; throws when it returns a negative value.
template <class Call>
auto h5_checked(Call&& call, const char* text, const std::string& context, const char* file,
                int line) {
  h5::QuietErrors quiet;
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
