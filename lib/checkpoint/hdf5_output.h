// Layout of a consolidated HDF5 file: one contiguous N-D dataset per tensor,
// named by the tensor's name at the root (f["model.norm.weight"] in h5py), plus
// root attributes "format", "step" and "state" (JSON). Datasets are allocated
// but not written here; the consolidator streams their bytes to the offsets
// returned, so no tensor ever has to fit in memory.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "checkpoint/layout.h"
#include "core/dtype.h"

namespace nss::checkpoint {

/// Lays out the HDF5 file at `path` (an empty file: OutputFile's temporary
/// one) with every tensor's dataset and returns each tensor's byte offset in
/// the file (tensors without elements are absent). Any failure is an
/// output_location_error (exit 2) with HDF5's reason: this writes only the output.
std::map<std::string, std::uint64_t> layout_hdf5_output(const std::string& path,
                                                        const std::vector<TensorSpec>& tensors,
                                                        std::int64_t step,
                                                        const nlohmann::json& state,
                                                        bool file_locking);

}  // namespace nss::checkpoint
