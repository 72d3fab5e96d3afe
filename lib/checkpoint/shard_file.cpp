#include "checkpoint/shard_file.h"

#include <sys/stat.h>

#include "core/error.h"
#include "core/fs.h"
#include "h5/errors.h"

namespace nss::checkpoint {
namespace {

void select_range(hid_t space, std::uint64_t offset, std::uint64_t count,
                  const std::string& subject) {
  const hsize_t start = offset, n = count;
  NSS_H5_CHECK(H5Sselect_hyperslab(space, H5S_SELECT_SET, &start, nullptr, &n, nullptr), subject);
}

// Marks 16-bit float datasets, stored as uint16, with their real type.
void write_dtype_attribute(hid_t dataset, DType dtype, const std::string& subject) {
  if (dtype != DType::kBFloat16 && dtype != DType::kFloat16) return;
  const std::string value = dtype_name(dtype);
  h5::Id type(H5Tcopy(H5T_C_S1));
  NSS_H5_CHECK(type.get(), subject);
  NSS_H5_CHECK(H5Tset_size(type.get(), value.size()), subject);
  h5::Id space(H5Screate(H5S_SCALAR));
  h5::Id attr(H5Acreate2(dataset, "dtype", type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT));
  NSS_H5_CHECK(attr.get(), subject);
  NSS_H5_CHECK(H5Awrite(attr.get(), type.get(), value.data()), subject);
}

}  // namespace

ShardFileWriter::ShardFileWriter(const std::string& path, bool file_locking) : path_(path) {
  silence_h5_errors();
  const h5::Id fapl = file_access_properties(file_locking);
  file_ = h5::Id(H5Fcreate(path.c_str(), H5F_ACC_EXCL, H5P_DEFAULT, fapl.get()));
  NSS_H5_CHECK(file_.get(), path);
}

void ShardFileWriter::create_dataset(const std::string& name, DType dtype, std::uint64_t elements) {
  const std::string subject = path_ + " " + name;
  dataset_.reset();
  const hsize_t dims = elements;
  h5::Id space(H5Screate_simple(1, &dims, nullptr));
  NSS_H5_CHECK(space.get(), subject);
  h5::Id lcpl(H5Pcreate(H5P_LINK_CREATE));
  NSS_H5_CHECK(H5Pset_create_intermediate_group(lcpl.get(), 1), subject);
  h5::Id dcpl(H5Pcreate(H5P_DATASET_CREATE));
  // Every element is written exactly once: writing fill values first would
  // double the I/O.
  NSS_H5_CHECK(H5Pset_fill_time(dcpl.get(), H5D_FILL_TIME_NEVER), subject);
  NSS_H5_CHECK(H5Pset_alloc_time(dcpl.get(), H5D_ALLOC_TIME_LATE), subject);
  dataset_ = h5::Id(H5Dcreate2(file_.get(), name.c_str(), h5::file_type(dtype), space.get(),
                               lcpl.get(), dcpl.get(), H5P_DEFAULT));
  NSS_H5_CHECK(dataset_.get(), subject);
  write_dtype_attribute(dataset_.get(), dtype, subject);
  dataset_name_ = name;
  dtype_ = dtype;
}

void ShardFileWriter::write(std::uint64_t offset, std::uint64_t count, const void* data) {
  NSS_ASSERT(dataset_.valid(), "checkpoint", "write() before create_dataset()");
  if (count == 0) return;
  const std::string subject = path_ + " " + dataset_name_;
  const hsize_t n = count;
  h5::Id memory(H5Screate_simple(1, &n, nullptr));
  h5::Id file_space(H5Dget_space(dataset_.get()));
  NSS_H5_CHECK(file_space.get(), subject);
  select_range(file_space.get(), offset, count, subject);
  NSS_H5_CHECK(H5Dwrite(dataset_.get(), h5::memory_type(dtype_), memory.get(), file_space.get(),
                        H5P_DEFAULT, data),
               subject);
}

std::uint64_t ShardFileWriter::close_and_sync() {
  dataset_.reset();
  if (file_.close() < 0)
    throw CheckpointError(
        "checkpoint",
        "closing " + path_ + " failed (HDF5 could not flush it): " + h5::take_error_text(),
        "check free space and quotas on the checkpoint file system");
  try {
    fsync_file(path_);
  } catch (const Error& e) {
    throw CheckpointError("checkpoint", e.message(),
                          "check free space and quotas on the checkpoint file system");
  }
  struct stat info {};
  if (::stat(path_.c_str(), &info) != 0)
    throw CheckpointError("checkpoint", "cannot stat " + path_ + ": " + errno_text(errno));
  return static_cast<std::uint64_t>(info.st_size);
}

ShardFileReader::ShardFileReader(const std::string& path, bool file_locking) : path_(path) {
  silence_h5_errors();
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0)
    throw CheckpointError("checkpoint", "cannot open " + path + ": " + errno_text(errno),
                          "a rank file of this step is missing; the step cannot be used");
  const h5::Id fapl = file_access_properties(file_locking);
  file_ = h5::Id(H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl.get()));
  NSS_H5_CHECK(file_.get(), path);
}

ShardFileReader::OpenDataset& ShardFileReader::open(const std::string& dataset) {
  const auto it = datasets_.find(dataset);
  if (it != datasets_.end()) return it->second;
  const std::string subject = path_ + " " + dataset;
  if (H5Lexists(file_.get(), dataset.c_str(), H5P_DEFAULT) <= 0) {
    H5Eclear2(H5E_DEFAULT);
    throw CheckpointError("checkpoint", subject + ": dataset does not exist",
                          "the rank file does not match metadata.json; the step cannot be used");
  }
  OpenDataset open;
  open.id = h5::Id(H5Dopen2(file_.get(), dataset.c_str(), H5P_DEFAULT));
  NSS_H5_CHECK(open.id.get(), subject);
  h5::Id space(H5Dget_space(open.id.get()));
  NSS_H5_CHECK(space.get(), subject);
  if (H5Sget_simple_extent_ndims(space.get()) != 1)
    throw CheckpointError("checkpoint", subject + " is not a 1-D dataset");
  hsize_t dims = 0;
  NSS_H5_CHECK(H5Sget_simple_extent_dims(space.get(), &dims, nullptr), subject);
  open.length = dims;
  open.type = h5::Id(H5Dget_type(open.id.get()));
  NSS_H5_CHECK(open.type.get(), subject);
  return datasets_.emplace(dataset, std::move(open)).first->second;
}

std::uint64_t ShardFileReader::dataset_length(const std::string& dataset) {
  return open(dataset).length;
}

void ShardFileReader::read(const std::string& dataset, DType dtype, std::uint64_t offset,
                           std::uint64_t count, void* out) {
  OpenDataset& d = open(dataset);
  const std::string subject = path_ + " " + dataset;
  if (H5Tequal(d.type.get(), h5::file_type(dtype)) <= 0)
    throw CheckpointError(
        "checkpoint", subject + ": element type differs from metadata.json's " + dtype_name(dtype),
        "the rank file does not match metadata.json; the step cannot be used");
  if (offset + count > d.length)
    throw CheckpointError("checkpoint",
                          subject + " has " + std::to_string(d.length) +
                              " elements, metadata.json needs [" + std::to_string(offset) + ", " +
                              std::to_string(offset + count) + ")",
                          "the rank file is truncated or does not match metadata.json");
  if (count == 0) return;
  const hsize_t n = count;
  h5::Id memory(H5Screate_simple(1, &n, nullptr));
  h5::Id file_space(H5Dget_space(d.id.get()));
  select_range(file_space.get(), offset, count, subject);
  NSS_H5_CHECK(
      H5Dread(d.id.get(), h5::memory_type(dtype), memory.get(), file_space.get(), H5P_DEFAULT, out),
      subject);
}

}  // namespace nss::checkpoint
