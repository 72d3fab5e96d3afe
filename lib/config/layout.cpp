// Layout arithmetic at a given world size: tensor groups and hybrid
// sharding's groups must divide the ranks, and every data-parallel rank
// runs the same number of micro-steps of micro_batch_size sequences, so
// global_batch_size must be a multiple of micro_batch_size x the
// data-parallel ranks (world size / tensor_parallel_size).
#include <optional>
#include <string>
#include <vector>

#include "config/checked_product.h"
#include "config/derived.h"
#include "config/load.h"
#include "core/error.h"

namespace nss::config {
namespace {

std::string join(const std::vector<std::int64_t>& values) {
  std::string text;
  for (auto v : values) text += (text.empty() ? "" : ", ") + std::to_string(v);
  return text;
}

// The first dozen divisors of n: enough to show the choices near the node size.
std::vector<std::int64_t> first_divisors(std::int64_t n) {
  std::vector<std::int64_t> values = divisors(n);
  if (values.size() > 12) values.resize(12);
  return values;
}

// Tensor groups are consecutive ranks; with sequence parallelism each holds
// an equal piece of every row.
void validate_tensor_groups(const Config& config, int world_size) {
  const std::int64_t t = config.parallel.tensor_parallel_size;
  if (t > world_size || world_size % t != 0)
    throw UsageError("config",
                     "parallel.tensor_parallel_size=" + std::to_string(t) +
                         (t > world_size ? " exceeds the " : " does not divide the ") +
                         std::to_string(world_size) + " ranks of this job",
                     "at " + std::to_string(world_size) + " ranks, tensor_parallel_size can be " +
                         join(first_divisors(world_size)) +
                         " (a divisor of the ranks per node, and of the model's heads)");
  if (t > 1 && config.parallel.sequence_parallel && config.data.seq_len % t != 0)
    throw UsageError("config",
                     "data.seq_len=" + std::to_string(config.data.seq_len) +
                         " is not a multiple of parallel.tensor_parallel_size=" +
                         std::to_string(t) + " (sequence parallelism splits every row)",
                     "set data.seq_len to a multiple of " + std::to_string(t) +
                         ", or parallel.sequence_parallel: false");
}

// Hybrid sharding splits the ranks of each tensor rank into equal groups.
void validate_shard_groups(const ParallelConfig& parallel, int world_size) {
  const std::int64_t group = parallel.shard_group_size;
  const auto ranks = static_cast<int>(world_size / parallel.tensor_parallel_size);
  if (group == 0 || (group <= ranks && ranks % group == 0)) return;
  const std::string of_ranks = parallel.tensor_parallel_size > 1
                                   ? std::to_string(ranks) + " ranks of each tensor rank (" +
                                         std::to_string(world_size) +
                                         " / parallel.tensor_parallel_size)"
                                   : std::to_string(ranks) + " ranks of this job";
  throw UsageError("config",
                   "parallel.shard_group_size=" + std::to_string(group) +
                       (group > ranks ? " exceeds the " : " does not divide the ") + of_ranks,
                   "at " + std::to_string(ranks) +
                       " ranks, shard_group_size can be 0 (all "
                       "ranks) or " +
                       join(first_divisors(ranks)) + "; usually the GPUs per node");
}

// "micro_batch_size x world_size" in messages, or the data-parallel ranks
// under tensor parallelism.
std::string batch_ranks_name(const Config& config) {
  return config.parallel.tensor_parallel_size > 1
             ? "micro_batch_size x data-parallel ranks (world size / tensor_parallel_size)"
             : "micro_batch_size x world_size";
}

}  // namespace

void validate_layout(const Config& config, int world_size) {
  const std::int64_t global = config.training.global_batch_size;
  const std::int64_t micro = config.training.micro_batch_size;
  if (world_size < 1) throw InternalError("config", "world size must be positive");
  validate_tensor_groups(config, world_size);
  validate_shard_groups(config.parallel, world_size);
  const std::int64_t ranks = data_parallel_ranks(config, world_size);
  if (poisson_batches(config)) return;  // every rank runs the largest share's micro-steps
  const std::optional<std::int64_t> product = checked_mul(micro, ranks);
  if (!product)
    throw UsageError("config",
                     batch_ranks_name(config) + " = " + std::to_string(micro) + " x " +
                         std::to_string(ranks) + " does not fit in 64 bits",
                     "lower training.micro_batch_size");
  const std::int64_t step = *product;
  if (global % step == 0) return;

  const std::string numbers = "training.global_batch_size=" + std::to_string(global) +
                              " is not a multiple of " + batch_ranks_name(config) + " = " +
                              std::to_string(micro) + " x " + std::to_string(ranks) + " = " +
                              std::to_string(step);
  std::string hint;
  const std::vector<std::int64_t> micros = micro_batch_choices(config, world_size);
  if (!micros.empty()) {
    hint =
        "at " + std::to_string(ranks) + " ranks, micro_batch_size can be " + join(micros) + "; or ";
  } else {
    hint = std::to_string(global) + " sequences cannot be split evenly over " +
           std::to_string(ranks) + " ranks; ";
  }
  const std::int64_t lower = global / step * step;
  const std::int64_t upper = lower + step;
  std::vector<std::int64_t> globals;
  if (lower > 0) globals.push_back(lower);
  globals.push_back(upper);
  hint += "keep micro_batch_size=" + std::to_string(micro) + " and set global_batch_size to " +
          (globals.size() == 2 ? join({globals[0]}) + " or " + join({globals[1]}) : join(globals));
  throw UsageError("config", numbers, hint);
}

}  // namespace nss::config
