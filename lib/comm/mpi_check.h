// NSS_MPI_CHECK(call): throws InternalError "[comm] MPI_X(...) failed: <MPI's
// text> (file:line)" when an MPI call does not return MPI_SUCCESS. Needs
// MPI_ERRORS_RETURN on the communicator (MpiRuntime sets it on the world).
#pragma once

#include <mpi.h>

#include "core/dtype.h"

namespace nss::comm {

/// Throws when `rc` is not MPI_SUCCESS.
void check_mpi(int rc, const char* call, const char* file, int line);

/// MPI datatype that carries `dtype` (16-bit floats travel as 2-byte integers).
MPI_Datatype mpi_datatype_of(DType dtype);

}  // namespace nss::comm

#define NSS_MPI_CHECK(call) ::nss::comm::check_mpi((call), #call, __FILE__, __LINE__)
