// How this rank stores one of a unit's flat buffers, and how that storage
// becomes the gathered compute-dtype buffer (after FSDP2's FSDPParam and the
// fsdp_pre_all_gather / fsdp_post_all_gather hooks of its tensor subclasses).
// The unit starts, prefetches and waits for gathers the same way whatever
// the storage; the storage says what this rank sends (which tensors, in
// which dtype: the all-gather moves exactly those bytes), how the gathered
// tensors become the buffer the unit's compute reads, when a prefetched
// gather is stale, and how it is filled. Implementations: fsdp/device_shard.h
// (a plain shard on the device), fsdp/offloaded_master.h (the master in host
// memory), fsdp/quantized_shard.h (NF4); docs/architecture.md, "Seams".
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <torch/types.h>

#include "comm/communicator.h"
#include "layout/flat_layout.h"

namespace nss::fsdp {

/// The element type a collective moves for tensors of `dtype` (float32,
/// float64, bfloat16, float16, uint8); InternalError for any other.
DType collective_dtype(torch::Dtype dtype);

/// Writes elements [offset, offset + count) of a parameter's row-major
/// flattening as fp32 (deterministic init, or slices of pretrained files).
using ParamFiller = std::function<void(const layout::FlatParam& param, std::int64_t offset,
                                       std::int64_t count, float* out)>;

/// A started gather of one flat buffer's shards: the buffers stay alive until
/// every ticket has been waited on.
struct InFlightGather {
  std::vector<torch::Tensor> send, full;
  std::vector<comm::CollectiveTicket> tickets;
  std::int64_t shard_version = 0;  // of the source shard when started
};

class ShardStorage {
 public:
  virtual ~ShardStorage() = default;

  /// Fills this rank's shard from `filler`, reading only the ranges it owns
  /// (local: it may fail on one rank).
  virtual void fill(const layout::FlatLayout& layout, const ParamFiller& filler) = 0;
  /// The collective rest of filling, on every rank after every rank's fill()
  /// succeeded (NF4's double-quantised scales); nothing by default.
  virtual void complete_fill(comm::Communicator& /*comm*/, const std::string& /*label*/) {}

  /// Pre-all-gather: the tensors this rank sends, contiguous, each gathered
  /// in its own dtype (float32, bfloat16, float16 or uint8); empty ones are skipped.
  virtual std::vector<torch::Tensor> all_gather_inputs() const = 0;
  /// Post-all-gather: the waited-for gathered tensors, in all_gather_inputs()
  /// order, as the unit's flat buffer in the compute dtype (padded length).
  virtual torch::Tensor post_all_gather(const std::vector<torch::Tensor>& gathered) const = 0;
  /// Changes whenever what all_gather_inputs() reads changes: a prefetched
  /// gather started at another version is gathered again.
  virtual std::int64_t version() const = 0;
  /// Bytes of this rank's shard on the compute device.
  virtual std::int64_t bytes() const = 0;

  /// Starts the all-gathers of all_gather_inputs() over `comm`.
  InFlightGather start_gather(comm::Communicator& comm) const;
  /// post_all_gather() of a gather whose tickets have been waited on.
  torch::Tensor unshard(const InFlightGather& gathered) const {
    return post_all_gather(gathered.full);
  }
};

/// The trainable buffer's storage: where the fp32 master lives and which
/// tensor is the autograd leaf that receives the gradient shard.
class TrainableStorage : public ShardStorage {
 public:
  /// fp32 master shard (numel 0 when the unit trains nothing).
  virtual torch::Tensor& master() = 0;
  /// The autograd leaf whose .grad() receives the fp32 gradient shard (on the device).
  virtual torch::Tensor& gradient_leaf() = 0;
  /// A device shard in the compute dtype that the gathers read and an
  /// optimizer step writes besides the master (undefined when the gathers read the master).
  virtual torch::Tensor& compute_shard() = 0;
  /// The master was written from outside an optimizer step (a checkpoint
  /// load): whatever is derived from it follows.
  virtual void master_written() = 0;
};

/// This rank's pieces of a flat buffer read through `filler` into a host fp32
/// shard of `shard_size` elements (padding zero).
torch::Tensor fill_on_host(const layout::FlatLayout& layout,
                           const std::vector<layout::ShardPiece>& pieces, std::int64_t shard_size,
                           const ParamFiller& filler);

}  // namespace nss::fsdp
