#include "h5/types.h"

#include <string>

#include "core/error.h"

namespace nss::h5 {

hid_t file_type(DType dtype) {
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
  throw InternalError("h5", std::string("no HDF5 type for ") + dtype_name(dtype));
}

hid_t memory_type(DType dtype) {
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
  throw InternalError("h5", std::string("no HDF5 type for ") + dtype_name(dtype));
}

}  // namespace nss::h5
