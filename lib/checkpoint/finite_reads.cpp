#include "checkpoint/finite_reads.h"

#include "core/finite_values.h"

namespace nss::checkpoint {
namespace {

constexpr const char* kHint =
    "nss_hpc never saves a NaN or an infinity: a rank file of this step was changed after the "
    "save; use another committed step";

std::string subject(const CheckpointReader& reader, const std::string& tensor) {
  return reader.step_dir() + ": tensor '" + tensor + "'";
}

}  // namespace

void read_finite(CheckpointReader& reader, const std::string& tensor, std::uint64_t offset,
                 std::uint64_t count, void* out) {
  reader.read(tensor, offset, count, out);
  require_finite(reader.tensor(tensor).dtype, out, offset, count, subject(reader, tensor), kHint);
}

void stream_finite(CheckpointReader& reader, const std::string& tensor, std::uint64_t window_bytes,
                   const std::function<void(const void*, std::uint64_t, std::uint64_t)>& sink) {
  FiniteScan scan(reader.tensor(tensor).dtype);
  reader.stream(tensor, window_bytes,
                [&](const void* data, std::uint64_t offset, std::uint64_t count) {
                  scan.scan(data, offset, count);
                  sink(data, offset, count);
                });
  scan.require(subject(reader, tensor), kHint);
}

}  // namespace nss::checkpoint
