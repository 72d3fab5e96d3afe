// Values the tools read out of a committed step (nss_consolidate, nss_eval).
// A save refuses NaN and infinity, so one met on reading means a rank file was
// changed after the save with its checksums made to match: DataError (exit 4)
// naming the step, the tensor and the element, as for any weights a tool loads.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "checkpoint/checkpoint_reader.h"

namespace nss::checkpoint {

/// CheckpointReader::read, then every value read checked.
void read_finite(CheckpointReader& reader, const std::string& tensor, std::uint64_t offset,
                 std::uint64_t count, void* out);

/// CheckpointReader::stream with every value checked as it passes; a bad one is
/// reported once the whole tensor is read, so damage shows as a checksum error.
void stream_finite(CheckpointReader& reader, const std::string& tensor, std::uint64_t window_bytes,
                   const std::function<void(const void*, std::uint64_t, std::uint64_t)>& sink);

}  // namespace nss::checkpoint
