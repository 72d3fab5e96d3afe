// One rank's HDF5 shard file: 1-D contiguous datasets of piece elements
// (little-endian, uncompressed, so h5py and any HDF5 tool can read them).
// Serial HDF5 with the thread-safe global lock: every call here holds that
// lock, so callers move data in bounded slices.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "checkpoint/h5_check.h"
#include "core/dtype.h"

namespace nss::checkpoint {

/// Creates a new shard file (never overwrites) and writes datasets slice by slice.
class ShardFileWriter {
 public:
  ShardFileWriter(const std::string& path, bool file_locking);

  /// Creates the 1-D dataset `name` (intermediate groups included) with
  /// `elements` elements and makes it the target of write().
  void create_dataset(const std::string& name, DType dtype, std::uint64_t elements);

  /// Writes `count` elements from `data` at element `offset` of the current dataset.
  void write(std::uint64_t offset, std::uint64_t count, const void* data);

  /// Closes the file (HDF5 flushes its metadata here, which can fail on a full
  /// disk) and fsyncs it. Returns the file's size in bytes.
  std::uint64_t close_and_sync();

  const std::string& path() const { return path_; }

 private:
  std::string path_;
  h5::Id file_;
  h5::Id dataset_;
  std::string dataset_name_;
  DType dtype_ = DType::kFloat32;
};

/// Opens a shard file read-only and reads element ranges of its datasets.
class ShardFileReader {
 public:
  ShardFileReader(const std::string& path, bool file_locking);

  /// Reads `count` elements at element `offset` of `dataset` into `out`; throws
  /// CheckpointError when the dataset is missing, has another element type or
  /// is too short.
  void read(const std::string& dataset, DType dtype, std::uint64_t offset, std::uint64_t count,
            void* out);

  /// Elements in `dataset`; throws CheckpointError when it does not exist.
  std::uint64_t dataset_length(const std::string& dataset);

  const std::string& path() const { return path_; }

 private:
  struct OpenDataset {
    h5::Id id;
    h5::Id type;
    std::uint64_t length = 0;
  };
  OpenDataset& open(const std::string& dataset);

  std::string path_;
  h5::Id file_;
  std::map<std::string, OpenDataset> datasets_;
};

}  // namespace nss::checkpoint
