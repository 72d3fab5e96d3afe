#include "data/h5_check.h"

#include <string>

#include "core/error.h"

namespace nss::data {
void throw_h5_error(const char* call, const std::string& context, const char* file, int line) {
  throw DataError("data", h5::failure_message(call, context, file, line));
}

bool has_attribute(hid_t object, const char* name, const std::string& context) {
  return NSS_H5_CHECK(H5Aexists(object, name), context) > 0;
}

std::string read_string_attribute(hid_t object, const char* name, const std::string& context) {
  const std::string where = context + " attribute '" + name + "'";
  h5::Id attribute(NSS_H5_CHECK(H5Aopen(object, name, H5P_DEFAULT), where));
  h5::Id type(NSS_H5_CHECK(H5Aget_type(attribute.get()), where));
  if (NSS_H5_CHECK(H5Tget_class(type.get()), where) != H5T_STRING)
    throw DataError("data", where + " is not a string",
                    "write it as a string, e.g. f.attrs['" + std::string(name) + "'] = '...'");
  h5::Id memory_type(NSS_H5_CHECK(H5Tcopy(type.get()), where));
  if (NSS_H5_CHECK(H5Tis_variable_str(type.get()), where) > 0) {
    char* value = nullptr;
    NSS_H5_CHECK(H5Aread(attribute.get(), memory_type.get(), &value), where);
    std::string result = value ? value : "";
    H5free_memory(value);
    return result;
  }
  const std::size_t size = H5Tget_size(type.get());
  std::string buffer(size, '\0');
  NSS_H5_CHECK(H5Aread(attribute.get(), memory_type.get(), buffer.data()), where);
  buffer.resize(buffer.find('\0') == std::string::npos ? size : buffer.find('\0'));
  return buffer;
}

std::int64_t read_int_attribute(hid_t object, const char* name, const std::string& context) {
  const std::string where = context + " attribute '" + name + "'";
  h5::Id attribute(NSS_H5_CHECK(H5Aopen(object, name, H5P_DEFAULT), where));
  h5::Id type(NSS_H5_CHECK(H5Aget_type(attribute.get()), where));
  h5::Id space(NSS_H5_CHECK(H5Aget_space(attribute.get()), where));
  if (NSS_H5_CHECK(H5Tget_class(type.get()), where) != H5T_INTEGER ||
      NSS_H5_CHECK(H5Sget_simple_extent_npoints(space.get()), where) != 1)
    throw DataError("data", where + " is not a single integer",
                    "write it as an integer, e.g. f.attrs['" + std::string(name) + "'] = 258");
  std::int64_t value = 0;
  NSS_H5_CHECK(H5Aread(attribute.get(), H5T_NATIVE_INT64, &value), where);
  return value;
}

void write_string_attribute(hid_t object, const char* name, const std::string& value,
                            const std::string& context) {
  const std::string where = context + " attribute '" + name + "'";
  h5::Id type(NSS_H5_CHECK(H5Tcopy(H5T_C_S1), where));
  NSS_H5_CHECK(H5Tset_size(type.get(), H5T_VARIABLE), where);
  NSS_H5_CHECK(H5Tset_cset(type.get(), H5T_CSET_UTF8), where);
  h5::Id space(NSS_H5_CHECK(H5Screate(H5S_SCALAR), where));
  h5::Id attribute(NSS_H5_CHECK(
      H5Acreate2(object, name, type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT), where));
  const char* text = value.c_str();
  NSS_H5_CHECK(H5Awrite(attribute.get(), type.get(), &text), where);
}

void write_int_attribute(hid_t object, const char* name, std::int64_t value,
                         const std::string& context) {
  const std::string where = context + " attribute '" + name + "'";
  h5::Id space(NSS_H5_CHECK(H5Screate(H5S_SCALAR), where));
  h5::Id attribute(NSS_H5_CHECK(
      H5Acreate2(object, name, H5T_STD_I64LE, space.get(), H5P_DEFAULT, H5P_DEFAULT), where));
  NSS_H5_CHECK(H5Awrite(attribute.get(), H5T_NATIVE_INT64, &value), where);
}

}  // namespace nss::data
