#include "test_helpers.h"

#include <fcntl.h>
#include <stdexcept>
#include <unistd.h>

#include <hdf5.h>

namespace nss::testing {

std::uint64_t dataset_file_offset(const std::string& h5_path, const std::string& dataset) {
  const hid_t file = H5Fopen(h5_path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (file < 0) throw std::runtime_error("cannot open " + h5_path);
  const hid_t d = H5Dopen2(file, dataset.c_str(), H5P_DEFAULT);
  const haddr_t offset = d >= 0 ? H5Dget_offset(d) : HADDR_UNDEF;
  if (d >= 0) H5Dclose(d);
  H5Fclose(file);
  if (offset == HADDR_UNDEF) throw std::runtime_error("no offset for " + dataset);
  return offset;
}

void flip_byte(const std::string& path, std::uint64_t offset) {
  const int fd = ::open(path.c_str(), O_RDWR);
  if (fd < 0) throw std::runtime_error("cannot open " + path);
  unsigned char byte = 0;
  if (::pread(fd, &byte, 1, static_cast<off_t>(offset)) != 1) throw std::runtime_error("pread");
  byte ^= 0xffu;
  if (::pwrite(fd, &byte, 1, static_cast<off_t>(offset)) != 1) throw std::runtime_error("pwrite");
  ::close(fd);
}

void truncate_file(const std::string& path, std::uint64_t bytes) {
  if (::truncate(path.c_str(), static_cast<off_t>(bytes)) != 0)
    throw std::runtime_error("cannot truncate " + path);
}

std::vector<float> read_float_dataset(const std::string& h5_path, const std::string& dataset) {
  const hid_t file = H5Fopen(h5_path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (file < 0) throw std::runtime_error("cannot open " + h5_path);
  const hid_t d = H5Dopen2(file, dataset.c_str(), H5P_DEFAULT);
  if (d < 0) throw std::runtime_error("no dataset " + dataset);
  const hid_t space = H5Dget_space(d);
  const hssize_t n = H5Sget_simple_extent_npoints(space);
  std::vector<float> values(static_cast<std::size_t>(n));
  if (n > 0) H5Dread(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data());
  H5Sclose(space);
  H5Dclose(d);
  H5Fclose(file);
  return values;
}

}  // namespace nss::testing
