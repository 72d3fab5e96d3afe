#include "train/synthetic_step.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <string>

#include <torch/cuda.h>
#include <torch/torch.h>

#include "comm/local_communicator.h"
#include "config/derived.h"
#include "core/error.h"
#include "core/failure.h"
#include "core/units.h"
#include "model/tensor_parallel_params.h"
#include "model/unit_layouts.h"
#include "optim/adamw.h"
#include "privacy/privacy_plan.h"
#include "privacy/secret_key.h"
#include "train/compute_device.h"
#include "train/private_step.h"
#include "train/sharded_llama.h"
#include "train/step_runner.h"
#include "train/training_step.h"

namespace nss::train {
namespace {

// The private step's noise key: synthetic data needs no secret, and the run's
// key must never be drawn or touched by the preflight.
constexpr const char* kSyntheticKeyHex =
    "73796e7468657469632d73746570206e6f697365206b657920286e6f20736563";

// sigma of the synthetic private step: neither memory nor time depends on the
// noise's scale, only on its being added (sigma > 0).
constexpr double kSyntheticNoiseMultiplier = 1.0;

// Weights only have to be finite: memory does not depend on their values. A
// cheap pattern instead of the real initialisation (or reading pretrained
// files) keeps the preflight fast for large models.
void fill_synthetic(const layout::FlatParam& param, std::int64_t offset, std::int64_t count,
                    float* out) {
  const bool norm = param.shape.size() == 1;
  for (std::int64_t i = 0; i < count; ++i) {
    const auto k = static_cast<std::uint64_t>(offset + i) * 2654435761u % 2001u;
    out[i] = norm ? 1.0f : 0.02f * (static_cast<float>(k) / 1000.0f - 1.0f);
  }
}

// One micro-batch as the trainer builds it: a host row buffer of seq_len + 1
// tokens per sample, copied into contiguous inputs and targets.
MicroBatchTensors synthetic_micro_batch(const config::Config& config, std::int64_t rows,
                                        std::int64_t step, std::int64_t micro,
                                        const std::vector<std::int64_t>& packed_row_spans) {
  const std::int64_t seq_len = config.data.seq_len;
  std::vector<std::int64_t> tokens(static_cast<std::size_t>(rows * (seq_len + 1)));
  for (std::size_t i = 0; i < tokens.size(); ++i)
    tokens[i] = static_cast<std::int64_t>((i * 7 + static_cast<std::size_t>(micro) * 13) %
                                          static_cast<std::size_t>(config.model.vocab_size));
  const auto rows_tensor = torch::from_blob(tokens.data(), {rows, seq_len + 1}, torch::kInt64);
  MicroBatchTensors batch;
  batch.inputs = rows_tensor.narrow(1, 0, seq_len).clone();
  batch.targets = rows_tensor.narrow(1, 1, seq_len).clone();
  batch.target_mask = torch::ones({rows, seq_len}, torch::kFloat32);
  if (config.data.packing != config::Packing::kWindows) {
    // Packed rows pay for gathered positions and document-aware attention,
    // laid out as the costliest row (default: one document filling it).
    std::vector<std::int64_t> positions, segments;
    const std::vector<std::int64_t> spans =
        packed_row_spans.empty() ? std::vector<std::int64_t>{seq_len} : packed_row_spans;
    for (std::size_t d = 0; d < spans.size(); ++d)
      for (std::int64_t i = 0; i < spans[d]; ++i) {
        positions.push_back(i);
        segments.push_back(static_cast<std::int64_t>(d));
      }
    NSS_ASSERT(static_cast<std::int64_t>(positions.size()) <= seq_len, "train",
               "packed row spans exceed seq_len");
    positions.resize(static_cast<std::size_t>(seq_len), 0);  // the padding after them
    segments.resize(static_cast<std::size_t>(seq_len), -1);
    const auto row_of = [&](std::vector<std::int64_t>& values) {
      return torch::from_blob(values.data(), {1, seq_len}, torch::kInt64)
          .expand({rows, seq_len})
          .clone();
    };
    batch.positions = row_of(positions);
    batch.segments = row_of(segments);
  }
  batch.randomness.seed = static_cast<std::uint64_t>(config.run.seed);
  batch.randomness.step = step;
  for (std::int64_t r = 0; r < rows; ++r) batch.randomness.sample_ids.push_back(micro * rows + r);
  return batch;
}

ResourceError out_of_memory(const std::string& doing, std::int64_t limit_bytes) {
  std::string message = doing + " ran out of memory";
  if (limit_bytes > 0)
    message +=
        ": it needed more than the " + format_bytes(limit_bytes) + " of tensors one rank can hold";
  return ResourceError("preflight", message,
                       "lower training.micro_batch_size, give each rank more memory, or use more "
                       "ranks (sharding divides the model and optimizer state)");
}

// Runs `work` with allocations capped at `limit` above `start` (0: no cap),
// turning every form of out-of-memory into ResourceError.
template <class Work>
auto limited(memory::MemoryMeter& meter, std::int64_t start, std::int64_t limit,
             const std::string& doing, Work work) -> decltype(work()) {
  struct Scope {
    memory::MemoryMeter& meter;
    bool active;
    ~Scope() {
      if (active) meter.clear_limit();
    }
  } scope{meter, limit > 0};
  if (limit > 0) meter.set_limit(start + limit);
  try {
    return work();
  } catch (...) {
    if (!classify(std::current_exception()).out_of_memory) throw;
    throw out_of_memory(doing, limit);
  }
}

// The stand-in collectives copy within the device's memory: plain memmove on
// the host, libtorch's copy (same stream as the compute) on a GPU.
comm::LocalCommunicator::CopyBytes device_copy(const torch::Device& device) {
  if (device.is_cpu()) return {};
  return [device](void* target, const void* source, std::size_t bytes) {
    const auto options = torch::TensorOptions().dtype(torch::kUInt8).device(device);
    const auto size = static_cast<std::int64_t>(bytes);
    torch::from_blob(target, {size}, options)
        .copy_(torch::from_blob(const_cast<void*>(source), {size}, options));
  };
}

// Hands the allocator's cached blocks back when it goes. First in Parts, it
// goes last: after the synthetic model, also when building that fails. What
// the measurement took is then free for training and the ranks sharing the
// device.
struct CachedBlocksRelease {
  memory::MemoryMeter& meter;
  ~CachedBlocksRelease() { meter.release_cached(); }
};

// DP-SGD's step keyed by a fixed synthetic key, with sigma
// kSyntheticNoiseMultiplier and the plan's clipping norm.
class SyntheticPrivacy final : public PrivateStepSource {
 public:
  explicit SyntheticPrivacy(const config::Config& config)
      : key_(privacy::SecretKey::from_hex(kSyntheticKeyHex).noise_key()),
        max_grad_norm_(privacy::clipping_norm(config)),
        expected_batch_(static_cast<double>(config.training.global_batch_size)) {}

  PrivateStepSettings step_settings(std::int64_t step, std::int64_t micro_steps, double lr,
                                    std::function<void()> before_update) const override {
    PrivateStepSettings settings;
    settings.step = step;
    settings.micro_steps = micro_steps;
    settings.lr = lr;
    settings.max_grad_norm = max_grad_norm_;
    settings.noise_multiplier = kSyntheticNoiseMultiplier;
    settings.expected_batch = expected_batch_;  // any positive divisor
    settings.noise_key = &key_;
    settings.before_update = std::move(before_update);
    return settings;
  }

 private:
  privacy::NoiseKey key_;
  double max_grad_norm_;
  double expected_batch_;
};

// The kind of step the plan runs: DP-SGD's or the usual.
std::unique_ptr<StepRunner> synthetic_step_runner(const config::Config& config,
                                                  const plan::RunPlan& plan, StepParts parts,
                                                  const SyntheticPrivacy& privacy) {
  if (plan.per_example) return std::make_unique<PrivateStepRunner>(parts, privacy);
  return std::make_unique<OrdinaryStepRunner>(parts, config.training.grad_clip);
}

int kv_replicas(const config::Config& config) {
  if (config.parallel.tensor_parallel_size <= 1) return 1;
  return static_cast<int>(model::tensor_parallel_plan(config).kv_replicas);
}

TensorComms tensor_comms(const plan::RunPlan& plan, comm::Communicator& tensor,
                         comm::Communicator& key_value) {
  if (plan.tensor_ranks <= 1) return {};
  return {&tensor, key_value.size() > 1 ? &key_value : nullptr};
}

}  // namespace

// The model, optimizer and step runner the job's would be, from the same
// factories.
struct SyntheticTraining::Parts {
  CachedBlocksRelease release;
  plan::RunPlan plan;
  comm::LocalCommunicator comm;
  // Tensor parallelism's groups, as rank 0 of them (the layer's pieces and
  // their collectives' buffers have their real sizes).
  comm::LocalCommunicator tensor, key_value;
  std::unique_ptr<ShardedLlama> model;
  ShardedState state;
  optim::AdamW adamw;
  SyntheticPrivacy privacy;
  std::unique_ptr<StepRunner> runner;

  Parts(const config::Config& config, const plan::RunPlan& run_plan, memory::MemoryMeter& meter)
      : release{meter},
        plan(run_plan),
        comm(plan.shard_ranks, device_copy(meter.torch_device())),
        tensor(plan.tensor_ranks, device_copy(meter.torch_device())),
        key_value(kv_replicas(config), device_copy(meter.torch_device())),
        model(ShardedLlama::from_config(config, plan, comm, meter.torch_device(),
                                        tensor_comms(plan, tensor, key_value))),
        state((model->initialize(fsdp::ParamFiller(fill_synthetic)), *model)),
        adamw(adamw_of(config.training)),
        privacy(config),
        runner(synthetic_step_runner(config, plan, {*model, state, adamw, comm}, privacy)) {}
};

SyntheticTraining::SyntheticTraining(const config::Config& config, const plan::RunPlan& plan,
                                     memory::MemoryMeter& meter, std::int64_t limit_bytes)
    : config_(config), meter_(meter), start_bytes_(meter.bytes_now()) {
  parts_ = limited(meter_, start_bytes_, limit_bytes, "building the synthetic model",
                   [&] { return std::make_unique<Parts>(config_, plan, meter_); });
  state_bytes_ = meter_.bytes_now() - start_bytes_;
}

SyntheticTraining::SyntheticTraining(const config::Config& config, int world_size,
                                     memory::MemoryMeter& meter, std::int64_t limit_bytes)
    : SyntheticTraining(config,
                        plan::make_run_plan(config, device_kind(meter.torch_device()), world_size),
                        meter, limit_bytes) {}

SyntheticTraining::~SyntheticTraining() = default;

std::int64_t SyntheticTraining::parameters() const {
  if (parts_->model->tensor_parallel()) return whole_parameters(false);
  std::int64_t total = 0;
  for (const auto& unit : parts_->state.layout().units())
    total += unit.numel(true) + unit.numel(false) + unit.quantized_parameters();
  return total;
}

// Under tensor parallelism the units hold one tensor rank's parts: each
// stands for T / copies parts of its tensor, the vocabulary's padding rows
// for nothing.
std::int64_t SyntheticTraining::whole_parameters(bool trainable_only) const {
  const ShardedLlama& llama = *parts_->model;
  const arch::TensorParallelPlan& plan = *llama.tensor_parallel()->plan;
  std::map<std::string, model::ParamSpec> specs;
  for (auto& spec : model::all_parameters(llama.model(), llama.lora())) specs[spec.name] = spec;
  const std::int64_t padding_rows = plan.padded_vocab - llama.model().vocab_size;
  std::int64_t total = 0;
  for (const auto& unit : parts_->state.layout().units())
    for (const layout::FlatParam& part : unit.params()) {
      if (trainable_only && !part.trainable) continue;
      const arch::TensorPlacement placement = model::parameter_placement(plan, specs.at(part.name));
      total += part.numel() * plan.size / model::tensor_copies(plan, placement);
      if (part.name == plan.embedding.name || part.name == plan.head.name)
        total -= padding_rows * llama.model().hidden_size;
    }
  return total;
}

std::int64_t SyntheticTraining::trainable_parameters() const {
  if (parts_->model->tensor_parallel()) return whole_parameters(true);
  std::int64_t total = 0;
  for (const auto& unit : parts_->state.layout().units()) total += unit.numel(true);
  return total;
}

SyntheticStepResult SyntheticTraining::run(const SyntheticStepRequest& request) {
  NSS_ASSERT(request.steps >= 2 && request.micro_steps >= 1 && request.micro_batch_size >= 1,
             "train", "the synthetic step needs >= 2 steps and >= 1 micro-batch of >= 1 sample");
  const auto start = std::chrono::steady_clock::now();
  SyntheticStepResult result;
  const std::string doing =
      "the synthetic step at micro_batch_size " + std::to_string(request.micro_batch_size);
  const torch::Device device = meter_.torch_device();
  std::int64_t workspaces = 0;
  limited(meter_, start_bytes_, request.limit_bytes, doing, [&] {
    for (std::int64_t step = 1; step <= request.steps; ++step) {
      meter_.reset_peak();
      const auto step_start = std::chrono::steady_clock::now();
      run_step(request, step);
      if (device.is_cuda()) torch::cuda::synchronize(device.index());
      result.step_seconds.push_back(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - step_start).count());
      // A step frees everything it allocated (gradients too); what stays
      // beyond the model state is the libraries' (see counts_workspaces_apart).
      if (meter_.counts_workspaces_apart())
        workspaces = std::max(workspaces, meter_.bytes_now() - start_bytes_ - state_bytes_);
      result.step_peak_bytes.push_back(meter_.peak_bytes() - start_bytes_ - workspaces);
    }
  });
  result.peak_bytes = result.step_peak_bytes.back();
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

void SyntheticTraining::run_step(const SyntheticStepRequest& request, std::int64_t step) {
  const torch::Device device = meter_.torch_device();
  std::int64_t micro = 0;
  const MicroBatchSource next = [&] {
    MicroBatchTensors batch = synthetic_micro_batch(config_, request.micro_batch_size, step,
                                                    micro++, request.packed_row_spans);
    batch.micro_steps = request.micro_steps;
    return on_device(std::move(batch), device);
  };
  parts_->runner->run(step, config_.training.lr, next, {});
}

SyntheticStepResult run_synthetic_step(const config::Config& config, int world_size,
                                       const SyntheticStepRequest& request,
                                       memory::MemoryMeter& meter) {
  const auto start = std::chrono::steady_clock::now();
  SyntheticStepResult result;
  {
    SyntheticTraining training(config, world_size, meter, request.limit_bytes);
    result = training.run(request);
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace nss::train
