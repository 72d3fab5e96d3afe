#include "comm/mpi_check.h"

#include <string>

#include "core/dtype.h"
#include "core/error.h"

namespace nss::comm {

void check_mpi(int rc, const char* call, const char* file, int line) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  MPI_Error_string(rc, text, &length);
  std::string name(call);
  const auto paren = name.find('(');
  if (paren != std::string::npos) name.erase(paren);
  throw InternalError("comm", name + " failed: " + std::string(text, length) + " (" +
                                  source_location(file, line) + ")");
}

MPI_Datatype mpi_datatype_of(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return MPI_FLOAT;
    case DType::kFloat64:
      return MPI_DOUBLE;
    case DType::kBFloat16:
    case DType::kFloat16:
    case DType::kUInt16:
      return MPI_UINT16_T;
    case DType::kInt8:
      return MPI_INT8_T;
    case DType::kUInt8:
      return MPI_UINT8_T;
    case DType::kInt16:
      return MPI_INT16_T;
    case DType::kInt32:
      return MPI_INT32_T;
    case DType::kUInt32:
      return MPI_UINT32_T;
    case DType::kInt64:
      return MPI_INT64_T;
    case DType::kUInt64:
      return MPI_UINT64_T;
  }
  throw InternalError("comm", std::string("no MPI datatype for dtype ") + dtype_name(dtype));
}

}  // namespace nss::comm
