#include "checkpoint/inspect.h"

#include <map>

#include <fmt/format.h>

#include "checkpoint/index.h"
#include "checkpoint/layout.h"
#include "core/units.h"

namespace nss::checkpoint {

std::string describe_checkpoint(const std::string& step_dir) {
  const CheckpointIndex index = read_index(step_dir);
  std::string out;
  out += fmt::format("{}\n", step_dir);
  out += fmt::format("  format {} v{}, step {}, written by {} rank(s), {} per {} block\n",
                     kFormatName, format_version(index), index.step, index.world_size,
                     kChecksumName, format_bytes(index.checksum_block_bytes));

  std::map<std::string, std::uint64_t> chunks_per_file;
  std::uint64_t elements = 0, tensor_bytes = 0;
  for (const auto& [name, t] : index.tensors) {
    elements += element_count(t.shape);
    tensor_bytes += element_count(t.shape) * dtype_size(t.dtype);
    for (const auto& c : t.chunks) ++chunks_per_file[c.file];
  }
  std::uint64_t total = 0;
  out += fmt::format("files ({}):\n", index.file_bytes.size());
  for (const auto& [name, bytes] : index.file_bytes) {
    out += fmt::format("  {:<16} {:>12}  {} chunks\n", name, format_bytes(bytes),
                       chunks_per_file[name]);
    total += bytes;
  }
  out += fmt::format("  total {}\n", format_bytes(total));

  out += fmt::format("tensors ({}, {} elements, {}):\n", index.tensors.size(), elements,
                     format_bytes(tensor_bytes));
  for (const auto& [name, t] : index.tensors) {
    out += fmt::format("  {}  {} {}\n", name, shape_text(t.shape), dtype_name(t.dtype));
    for (const auto& c : t.chunks)
      out += fmt::format("      [{}, {}) {} {} @{}\n", c.tensor_offset, c.tensor_offset + c.length,
                         c.file, c.dataset, c.dataset_offset);
  }
  out += "state:\n" + index.state.dump(2) + "\n";
  return out;
}

}  // namespace nss::checkpoint
