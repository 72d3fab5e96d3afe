// Helpers shared by the checkpoint tests: damaging files on purpose and
// reading HDF5 datasets back without the library under test.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace nss::testing {

/// Byte offset in `h5_path` of the first element of contiguous `dataset`.
std::uint64_t dataset_file_offset(const std::string& h5_path, const std::string& dataset);

/// XORs the byte at `offset` of `path` with 0xff.
void flip_byte(const std::string& path, std::uint64_t offset);

/// Truncates `path` to `bytes` bytes.
void truncate_file(const std::string& path, std::uint64_t bytes);

/// Reads a whole float32 dataset of any shape with the HDF5 C API.
std::vector<float> read_float_dataset(const std::string& h5_path, const std::string& dataset);

}  // namespace nss::testing
