// The sharded-vs-unsharded equivalence harness of the training tests: a tiny
// model trained kSteps steps by plain autograd on whole tensors (the
// reference) and by the sharded trainer at any layout (all ranks, or hybrid
// sharding's shard and replica groups), compared by loss and final parameters.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <torch/types.h>

#include "comm/communicator.h"
#include "comm/mpi_communicator.h"
#include "comm/shard_groups.h"
#include "config/config.h"
#include "fsdp/sharded_unit.h"
#include "train/sharded_llama.h"
#include "train/training_step.h"

namespace nss::train::testing {

inline constexpr int kSteps = 4;

struct Case {
  std::int64_t global_batch = 8;
  std::int64_t micro_batch = 1;  // per rank; 0 = global / world (no accumulation)
  bool tied = false;
  bool lora = false;
  bool checkpointing = true;
  bool masked = false;                  // instruction-style loss masks (target_mask_of)
  bool packed = false;                  // rows of several documents (pack)
  std::int64_t loss_chunk_tokens = -1;  // training.loss_chunk_tokens; -1: the default
  bool selective = false;               // with checkpointing: selective recompute, not full
  std::string family = "llama";         // model.family, with each of its features used (use_family)
};

struct Result {
  std::vector<double> losses;
  std::vector<double> grad_norms;               // before clipping
  std::map<std::string, torch::Tensor> params;  // final, whole
};

// Where the sharded model computes: the CPU in fp32 unless a test says otherwise.
struct Placement {
  torch::Device device = torch::kCPU;
  torch::Dtype dtype = torch::kFloat32;
  bool prefetch = false;
};

// Relative tolerances against the unsharded fp32 CPU reference.
struct Tolerance {
  double loss = 1e-5;
  double params = 1e-5;  // max|difference| / max|parameter|
};

/// One layout of the world, as the trainer builds it: hybrid sharding's
/// groups of `group_size` ranks (0: all ranks, full sharding) of each of
/// `tensor_size` tensor ranks; with T > 1 the key/value groups of a model
/// with `kv_replicas`. Collective.
struct Layout {
  explicit Layout(int group_size, int tensor_size = 1, int kv_replicas = 1);
  fsdp::ShardComms unit_comms() { return {*groups.shard, groups.replicate.get(), *world}; }
  StepComms step_comms() {
    if (groups.tensor) return {*world, *groups.replica, groups.tensor->size()};
    return {*world, *groups.shard};
  }
  TensorComms tensor_comms() { return {groups.tensor.get(), key_value.get()}; }

  std::unique_ptr<comm::MpiCommunicator> world;
  comm::ShardGroupShape shape;
  comm::MpiShardGroups groups;
  std::unique_ptr<comm::MpiCommunicator> key_value;
};

/// The ranks of MPI_COMM_WORLD, and the group sizes that divide them.
int world_size();
std::vector<int> group_sizes(int world_size);

config::Config make_config(const Case& c);

/// The reference: whole tensors, the global batch at once, plain autograd.
Result train_unsharded(const config::Config& config, bool masked, bool packed);

/// The sharded trainer: units over `comms`, the step's reductions over
/// `step_comms`, the global batch split over step_comms.world's ranks.
/// `base`: the initial weights instead of model::InitialWeights.
/// With config.parallel.tensor_parallel_size > 1 the model computes over
/// `tensor`, whose ranks read the same batches; the parameters come back whole.
Result train_sharded(const config::Config& config, fsdp::ShardComms comms, StepComms step_comms,
                     std::int64_t micro_batch, const Placement& placement = {}, bool masked = false,
                     bool packed = false, const fsdp::ParamFiller* base = nullptr,
                     TensorComms tensor = {});
/// Full sharding over `comm`.
Result train_sharded(const config::Config& config, comm::Communicator& comm,
                     std::int64_t micro_batch, const Placement& placement = {}, bool masked = false,
                     bool packed = false, const fsdp::ParamFiller* base = nullptr);

/// train_sharded(c) equals train_unsharded(c) within `tolerance` (gtest expectations).
void expect_equivalent(const Case& c, fsdp::ShardComms comms, StepComms step_comms,
                       const Placement& placement = {}, const Tolerance& tolerance = {});
/// The same for a configuration made by the caller, over `layout`.
void expect_equivalent(const Case& c, const config::Config& config, Layout& layout,
                       const Tolerance& tolerance = {});
void expect_equivalent(const Case& c, comm::Communicator& comm, const Placement& placement = {},
                       const Tolerance& tolerance = {});

}  // namespace nss::train::testing
