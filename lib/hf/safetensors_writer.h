// Streaming safetensors writer. The header is written first (shapes and
// dtypes are known up front); tensor data then arrives piece by piece, in any
// order, converted on the fly, so a writer never holds a whole tensor. The file
// appears under its final name only on commit() (temporary file + rename).
// Failing to create, write, sync or rename it is an output_location_error
// (core/output_location.h, exit 2): the place it was pointed at is at fault.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/output_file.h"
#include "hf/safetensors_header.h"

namespace nss::hf {

/// The `__metadata__` Hugging Face's loaders expect of PyTorch weights.
std::map<std::string, std::string> pytorch_metadata();

class SafetensorsWriter {
 public:
  /// Creates a temporary file next to `path` holding the header for `tensors`
  /// (offsets are assigned here; names, dtypes and shapes are taken as given).
  SafetensorsWriter(std::string path, std::vector<SafetensorsTensor> tensors,
                    const std::map<std::string, std::string>& metadata = pytorch_metadata());
  /// Removes the temporary file unless commit() succeeded.
  ~SafetensorsWriter();
  SafetensorsWriter(const SafetensorsWriter&) = delete;
  SafetensorsWriter& operator=(const SafetensorsWriter&) = delete;

  /// Writes elements [offset, offset + count) of tensor `name` from `data`,
  /// whose elements are `data_dtype`, converting to the tensor's dtype.
  /// Every element must be written exactly once before commit().
  void write(const std::string& name, std::int64_t offset, std::int64_t count, const void* data,
             DType data_dtype);

  /// Checks that every element was written, fsyncs, renames the temporary file
  /// to the final path and fsyncs the directory.
  void commit();

  const std::string& path() const { return file_.path(); }
  /// The tensors with their data offsets, in data order.
  const std::vector<SafetensorsTensor>& tensors() const { return tensors_; }
  /// Size of the finished file in bytes.
  std::uint64_t file_bytes() const { return data_start_ + data_bytes_; }

 private:
  struct Progress {
    std::size_t tensor = 0;                      // index into tensors_
    std::map<std::int64_t, std::int64_t> spans;  // written element ranges begin -> end, merged
  };

  void record_span(Progress& progress, std::int64_t begin, std::int64_t end);

  OutputFile file_;
  bool committed_ = false;
  std::vector<SafetensorsTensor> tensors_;
  std::map<std::string, Progress> progress_;
  std::uint64_t data_start_ = 0;
  std::uint64_t data_bytes_ = 0;
};

}  // namespace nss::hf
