// HDF5 element types for nss_hpc's element types (core/dtype.h).
#pragma once

#include <hdf5.h>

#include "core/dtype.h"

namespace nss::h5 {

/// The type stored in files: little-endian; 16-bit floats as uint16 (with a
/// "dtype" attribute saying which), since HDF5 1.10 has no such types.
hid_t file_type(DType dtype);

/// The native in-memory type with the same bytes as `dtype`.
hid_t memory_type(DType dtype);

}  // namespace nss::h5
