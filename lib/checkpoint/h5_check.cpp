#include "checkpoint/h5_check.h"

#include <string>

#include "core/error.h"

namespace nss::checkpoint {
namespace {

herr_t append_frame(unsigned depth, const H5E_error2_t* frame, void* out) {
  auto& text = *static_cast<std::string*>(out);
  // The innermost frames say what went wrong (e.g. "No space left on device").
  if (depth > 3) return 0;
  if (!text.empty()) text += "; ";
  text += frame->desc ? frame->desc : "?";
  return 0;
}

std::string error_stack_text() {
  std::string text;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, append_frame, &text);
  H5Eclear2(H5E_DEFAULT);
  return text.empty() ? std::string("no HDF5 error detail") : text;
}

}  // namespace

void check_h5(long long status, const char* call, const std::string& subject, const char* file,
              int line) {
  if (status >= 0) return;
  std::string name(call);
  const auto paren = name.find('(');
  if (paren != std::string::npos) name.erase(paren);
  throw CheckpointError("checkpoint", name + " failed for " + subject + ": " + error_stack_text() +
                                          " (" + source_location(file, line) + ")");
}

void silence_h5_errors() {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
}

bool H5Id::close() {
  if (id_ < 0) return true;
  const hid_t id = std::exchange(id_, H5I_INVALID_HID);
  herr_t rc = 0;
  switch (H5Iget_type(id)) {
    case H5I_FILE:
      rc = H5Fclose(id);
      break;
    case H5I_GROUP:
      rc = H5Gclose(id);
      break;
    case H5I_DATASET:
      rc = H5Dclose(id);
      break;
    case H5I_DATASPACE:
      rc = H5Sclose(id);
      break;
    case H5I_DATATYPE:
      rc = H5Tclose(id);
      break;
    case H5I_ATTR:
      rc = H5Aclose(id);
      break;
    case H5I_GENPROP_LST:
      rc = H5Pclose(id);
      break;
    default:
      rc = H5Idec_ref(id);
      break;
  }
  if (rc < 0) H5Eclear2(H5E_DEFAULT);
  return rc >= 0;
}

H5Id file_access_properties(bool file_locking) {
  H5Id fapl(H5Pcreate(H5P_FILE_ACCESS));
  NSS_H5_CHECK(fapl.get(), "a file-access property list");
  // ignore_when_disabled: also succeed where the file system has no locks at all.
  NSS_H5_CHECK(H5Pset_file_locking(fapl.get(), file_locking ? 1 : 0, 1),
               "a file-access property list");
  return fapl;
}

hid_t h5_file_type(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return H5T_IEEE_F32LE;
    case DType::kFloat64:
      return H5T_IEEE_F64LE;
    case DType::kBFloat16:
    case DType::kFloat16:
    case DType::kUInt16:
      return H5T_STD_U16LE;
    case DType::kInt8:
      return H5T_STD_I8LE;
    case DType::kUInt8:
      return H5T_STD_U8LE;
    case DType::kInt16:
      return H5T_STD_I16LE;
    case DType::kInt32:
      return H5T_STD_I32LE;
    case DType::kUInt32:
      return H5T_STD_U32LE;
    case DType::kInt64:
      return H5T_STD_I64LE;
    case DType::kUInt64:
      return H5T_STD_U64LE;
  }
  throw InternalError("checkpoint", std::string("no HDF5 type for ") + dtype_name(dtype));
}

hid_t h5_memory_type(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return H5T_NATIVE_FLOAT;
    case DType::kFloat64:
      return H5T_NATIVE_DOUBLE;
    case DType::kBFloat16:
    case DType::kFloat16:
    case DType::kUInt16:
      return H5T_NATIVE_UINT16;
    case DType::kInt8:
      return H5T_NATIVE_INT8;
    case DType::kUInt8:
      return H5T_NATIVE_UINT8;
    case DType::kInt16:
      return H5T_NATIVE_INT16;
    case DType::kInt32:
      return H5T_NATIVE_INT32;
    case DType::kUInt32:
      return H5T_NATIVE_UINT32;
    case DType::kInt64:
      return H5T_NATIVE_INT64;
    case DType::kUInt64:
      return H5T_NATIVE_UINT64;
  }
  throw InternalError("checkpoint", std::string("no HDF5 type for ") + dtype_name(dtype));
}

}  // namespace nss::checkpoint
