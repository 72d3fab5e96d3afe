#include "checkpoint/hdf5_output.h"

#include "checkpoint/h5_check.h"
#include "checkpoint/layout.h"
#include "core/error.h"
#include "core/output_location.h"
#include "h5/errors.h"

namespace nss::checkpoint {
namespace {

void write_string_attribute(hid_t object, const char* name, const std::string& value,
                            const std::string& subject) {
  h5::Id type(H5Tcopy(H5T_C_S1));
  NSS_H5_CHECK(type.get(), subject);
  NSS_H5_CHECK(H5Tset_size(type.get(), std::max<std::size_t>(1, value.size())), subject);
  h5::Id space(H5Screate(H5S_SCALAR));
  h5::Id attr(H5Acreate2(object, name, type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT));
  NSS_H5_CHECK(attr.get(), subject);
  const std::string padded = value.empty() ? std::string(1, '\0') : value;
  NSS_H5_CHECK(H5Awrite(attr.get(), type.get(), padded.data()), subject);
}

void write_int_attribute(hid_t object, const char* name, std::int64_t value,
                         const std::string& subject) {
  h5::Id space(H5Screate(H5S_SCALAR));
  h5::Id attr(H5Acreate2(object, name, H5T_STD_I64LE, space.get(), H5P_DEFAULT, H5P_DEFAULT));
  NSS_H5_CHECK(attr.get(), subject);
  NSS_H5_CHECK(H5Awrite(attr.get(), H5T_NATIVE_INT64, &value), subject);
}

std::map<std::string, std::uint64_t> lay_out(const std::string& path,
                                             const std::vector<TensorSpec>& tensors,
                                             std::int64_t step, const nlohmann::json& state,
                                             bool file_locking) {
  silence_h5_errors();
  const h5::Id fapl = file_access_properties(file_locking);
  h5::Id file(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()));
  NSS_H5_CHECK(file.get(), path);
  write_string_attribute(file.get(), "format", "nss-dcp-consolidated", path);
  write_int_attribute(file.get(), "step", step, path);
  write_string_attribute(file.get(), "state", state.dump(), path);

  h5::Id dcpl(H5Pcreate(H5P_DATASET_CREATE));
  NSS_H5_CHECK(H5Pset_layout(dcpl.get(), H5D_CONTIGUOUS), path);
  // Allocated now, at a fixed address, and never filled: the bytes are streamed in later.
  NSS_H5_CHECK(H5Pset_alloc_time(dcpl.get(), H5D_ALLOC_TIME_EARLY), path);
  NSS_H5_CHECK(H5Pset_fill_time(dcpl.get(), H5D_FILL_TIME_NEVER), path);
  std::vector<std::pair<std::string, h5::Id>> datasets;
  for (const auto& t : tensors) {
    const std::string subject = path + " " + t.name;
    std::vector<hsize_t> dims(t.shape.begin(), t.shape.end());
    h5::Id space(dims.empty()
                     ? H5Screate(H5S_SCALAR)
                     : H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr));
    NSS_H5_CHECK(space.get(), subject);
    h5::Id dataset(H5Dcreate2(file.get(), t.name.c_str(), h5::file_type(t.dtype), space.get(),
                              H5P_DEFAULT, element_count(t.shape) > 0 ? dcpl.get() : H5P_DEFAULT,
                              H5P_DEFAULT));
    NSS_H5_CHECK(dataset.get(), subject);
    if (t.dtype == DType::kBFloat16 || t.dtype == DType::kFloat16)
      write_string_attribute(dataset.get(), "dtype", dtype_name(t.dtype), subject);
    datasets.emplace_back(t.name, std::move(dataset));
  }
  std::map<std::string, std::uint64_t> offsets;
  for (const auto& [name, dataset] : datasets) {
    const haddr_t address = H5Dget_offset(dataset.get());
    if (address != HADDR_UNDEF) offsets[name] = address;
    H5Eclear2(H5E_DEFAULT);
  }
  datasets.clear();
  // Closing writes HDF5's metadata and extends the file to its full size.
  if (file.close() < 0)
    throw output_location_error("consolidate",
                                "cannot close " + path + ": " + h5::take_error_text());
  return offsets;
}

}  // namespace

std::map<std::string, std::uint64_t> layout_hdf5_output(const std::string& path,
                                                        const std::vector<TensorSpec>& tensors,
                                                        std::int64_t step,
                                                        const nlohmann::json& state,
                                                        bool file_locking) {
  try {
    return lay_out(path, tensors, step, state, file_locking);
  } catch (const CheckpointError& e) {
    // NSS_H5_CHECK's error; nothing but the output is written here.
    throw output_location_error("consolidate", "cannot lay out " + path + ": " + e.message());
  }
}

}  // namespace nss::checkpoint
