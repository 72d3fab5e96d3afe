// The dataloader's host-memory footprint, for the preflight's estimate
// (DESIGN.md "Preflight"): what the prefetch queue may hold on one rank.
#pragma once

#include <cstdint>

namespace nss::data {

/// Bytes of one sample in a micro-batch: seq_len + 1 int64 tokens, its
/// int64 sample id and seq_len target-mask bytes; packed rows also seq_len
/// int64 positions and segments.
std::int64_t sample_bytes(std::int64_t seq_len, bool packed);

/// Micro-batches the loader holds at once: num_workers x prefetch_factor
/// (one, built on the caller's thread, with 0 workers).
std::int64_t queued_micro_batches(std::int64_t num_workers, std::int64_t prefetch_factor);

/// Host bytes per rank: queued_micro_batches x micro_batch_size x
/// sample_bytes x 2 (each micro-batch is copied once more into the trainer's
/// tensors). Multiply by the ranks per node for a node's total.
std::int64_t loader_host_memory_bytes(std::int64_t num_workers, std::int64_t prefetch_factor,
                                      std::int64_t micro_batch_size, std::int64_t seq_len,
                                      bool packed);

}  // namespace nss::data
