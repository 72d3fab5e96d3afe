#include "data/h5_handle.h"

#include <string>
#include <vector>

#include "core/error.h"

namespace nss::data {
namespace {

// Collects the description of every entry on the thread's error stack,
// innermost last, e.g. "unable to open file; file signature not found".
herr_t collect_message(unsigned /*n*/, const H5E_error2_t* entry, void* data) {
  auto* messages = static_cast<std::vector<std::string>*>(data);
  if (entry->desc && *entry->desc) {
    std::string text = entry->desc;
    if (messages->empty() || messages->back() != text) messages->push_back(text);
  }
  return 0;
}

std::string error_stack_text() {
  std::vector<std::string> messages;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, collect_message, &messages);
  std::string text;
  for (const auto& message : messages) text += (text.empty() ? "" : "; ") + message;
  return text.empty() ? "no HDF5 error text" : text;
}

}  // namespace

H5QuietErrors::H5QuietErrors() {
  H5Eget_auto2(H5E_DEFAULT, &saved_function_, &saved_data_);
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
}

H5QuietErrors::~H5QuietErrors() {
  H5Eset_auto2(H5E_DEFAULT, saved_function_, saved_data_);
}

void throw_h5_error(const char* call, const std::string& context, const char* file, int line) {
  std::string name(call);
  const auto paren = name.find('(');
  if (paren != std::string::npos) name.erase(paren);
  const std::string text = error_stack_text();
  H5Eclear2(H5E_DEFAULT);
  throw DataError("data", name + " failed on " + context + ": " + text + " (" +
                              source_location(file, line) + ")");
}

H5Handle& H5Handle::operator=(H5Handle&& other) noexcept {
  if (this != &other) {
    reset();
    id_ = std::exchange(other.id_, H5I_INVALID_HID);
    close_ = other.close_;
  }
  return *this;
}

void H5Handle::reset() {
  if (id_ >= 0 && close_) {
    H5QuietErrors quiet;
    close_(id_);
  }
  id_ = H5I_INVALID_HID;
}

void H5Handle::close_checked(const std::string& context) {
  const hid_t id = std::exchange(id_, H5I_INVALID_HID);
  if (id >= 0 && close_) NSS_H5_CHECK(close_(id), context);
}

bool has_attribute(hid_t object, const char* name, const std::string& context) {
  return NSS_H5_CHECK(H5Aexists(object, name), context) > 0;
}

std::string read_string_attribute(hid_t object, const char* name, const std::string& context) {
  const std::string where = context + " attribute '" + name + "'";
  H5Handle attribute(NSS_H5_CHECK(H5Aopen(object, name, H5P_DEFAULT), where), H5Aclose);
  H5Handle type(NSS_H5_CHECK(H5Aget_type(attribute.get()), where), H5Tclose);
  if (NSS_H5_CHECK(H5Tget_class(type.get()), where) != H5T_STRING)
    throw DataError("data", where + " is not a string",
                    "write it as a string, e.g. f.attrs['" + std::string(name) + "'] = '...'");
  H5Handle memory_type(NSS_H5_CHECK(H5Tcopy(type.get()), where), H5Tclose);
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
  H5Handle attribute(NSS_H5_CHECK(H5Aopen(object, name, H5P_DEFAULT), where), H5Aclose);
  H5Handle type(NSS_H5_CHECK(H5Aget_type(attribute.get()), where), H5Tclose);
  H5Handle space(NSS_H5_CHECK(H5Aget_space(attribute.get()), where), H5Sclose);
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
  H5Handle type(NSS_H5_CHECK(H5Tcopy(H5T_C_S1), where), H5Tclose);
  NSS_H5_CHECK(H5Tset_size(type.get(), H5T_VARIABLE), where);
  NSS_H5_CHECK(H5Tset_cset(type.get(), H5T_CSET_UTF8), where);
  H5Handle space(NSS_H5_CHECK(H5Screate(H5S_SCALAR), where), H5Sclose);
  H5Handle attribute(
      NSS_H5_CHECK(H5Acreate2(object, name, type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT),
                   where),
      H5Aclose);
  const char* text = value.c_str();
  NSS_H5_CHECK(H5Awrite(attribute.get(), type.get(), &text), where);
}

void write_int_attribute(hid_t object, const char* name, std::int64_t value,
                         const std::string& context) {
  const std::string where = context + " attribute '" + name + "'";
  H5Handle space(NSS_H5_CHECK(H5Screate(H5S_SCALAR), where), H5Sclose);
  H5Handle attribute(
      NSS_H5_CHECK(H5Acreate2(object, name, H5T_STD_I64LE, space.get(), H5P_DEFAULT, H5P_DEFAULT),
                   where),
      H5Aclose);
  NSS_H5_CHECK(H5Awrite(attribute.get(), H5T_NATIVE_INT64, &value), where);
}

}  // namespace nss::data
