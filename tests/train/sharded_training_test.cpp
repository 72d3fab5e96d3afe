// Sharded training against an unsharded single-process reference: the same
// 8 steps at 1, 2 and 4 ranks give the same losses (relative 1e-5) and the
// same final parameters (max|diff| / max|p| <= 1e-5) as plain autograd on
// whole tensors, for gradient accumulation on and off, tied and untied
// embeddings, LoRA (with dropout), activation checkpointing on and off and a
// unit whose size does not divide by the world size. Also: bitwise
// determinism, skipped non-finite steps, and the traffic formula.
#include <cmath>

#include <gtest/gtest.h>
#include <torch/cuda.h>
#include <torch/torch.h>

#include "comm/local_communicator.h"
#include "comm/mpi_communicator.h"
#include "comm/nccl_communicator.h"
#include "config/load.h"
#include "model/initial_weights.h"
#include "model/llama_model.h"
#include "model/param_spec.h"
#include "optim/adamw.h"
#include "optim/grad_clip.h"
#include "optim/lr_schedule.h"
#include "quant/nf4_storage.h"
#include "tiny_batches.h"
#include "train/sharded_llama.h"
#include "train/training_step.h"

namespace nss::train {
namespace {

using testing::batch_of;
using testing::gather_trainable;
using testing::kSeqLen;

constexpr int kSteps = 4;

struct Case {
  std::int64_t global_batch = 8;
  std::int64_t micro_batch = 1;  // per rank; 0 = global / world (no accumulation)
  bool tied = false;
  bool lora = false;
  bool checkpointing = true;
  bool masked = false;  // instruction-style loss masks (target_mask_of)
  bool packed = false;  // rows of several documents (pack)
};

config::Config make_config(const Case& c) {
  std::string yaml = R"(
model: {preset: tiny, hidden_size: 50, intermediate_size: 100, num_hidden_layers: 2,
        num_attention_heads: 5, num_key_value_heads: 1, head_dim: 10, vocab_size: 259,
        max_position_embeddings: 64}
data: {seq_len: 12}
training: {lr: 0.001, min_lr: 0.0001, warmup_steps: 2, max_steps: 8, weight_decay: 0.1,
           grad_clip: 1.0, beta2: 0.99}
)";
  config::Config config = config::parse_config_text(yaml, "test");
  config.model.tie_word_embeddings = c.tied;
  config.training.global_batch_size = c.global_batch;
  config.training.activation_checkpointing = c.checkpointing;
  config.training.lora.enabled = c.lora;
  config.training.lora.rank = 4;
  config.training.lora.dropout = 0.1;
  config.training.lora.targets = {"q_proj", "v_proj", "down_proj"};
  return config;
}

struct Result {
  std::vector<double> losses;
  std::map<std::string, torch::Tensor> params;  // final, whole
};

// The reference: whole tensors, the global batch at once, plain autograd.
Result train_unsharded(const config::Config& config, bool masked, bool packed) {
  const auto& t = config.training;
  model::LlamaModel model(config.model, t.lora, torch::TensorOptions().dtype(torch::kFloat32));
  model.load(
      model::InitialWeights(config.model, t.lora, static_cast<std::uint64_t>(config.run.seed)));
  std::vector<torch::Tensor> params, moments_1, moments_2;
  std::vector<optim::AdamWShard> shards;
  std::vector<std::string> names;
  for (int u = 0; u < model.num_units(); ++u) {
    for (std::size_t i = 0; i < model.unit_specs(u).size(); ++i) {
      const auto& spec = model.unit_specs(u)[i];
      if (!spec.trainable) continue;
      params.push_back(model.unit_tensors(u)[i]);
      names.push_back(spec.name);
    }
  }
  moments_1.reserve(params.size());
  moments_2.reserve(params.size());
  for (std::size_t i = 0; i < params.size(); ++i) {
    moments_1.push_back(torch::zeros_like(params[i]).detach());
    moments_2.push_back(torch::zeros_like(params[i]).detach());
  }
  for (int u = 0, k = 0; u < model.num_units(); ++u) {
    for (const auto& spec : model.unit_specs(u)) {
      if (!spec.trainable) continue;
      const bool decay =
          spec.role != model::ParamRole::kNorm && spec.role != model::ParamRole::kEmbedding;
      fsdp::ElementRanges ranges;
      if (decay) ranges.emplace_back(0, params[k].numel());
      shards.push_back({&params[k], &moments_1[k], &moments_2[k], ranges});
      ++k;
    }
  }
  const optim::AdamW adamw({t.beta1, t.beta2, t.eps, t.weight_decay});
  const optim::LrSchedule schedule({t.lr, t.min_lr, t.warmup_steps, t.max_steps, t.lr_schedule});
  comm::LocalCommunicator single(1);
  std::vector<torch::Tensor*> pointers;
  for (auto& p : params) pointers.push_back(&p);
  Result result;
  std::int64_t applied = 0;
  for (int step = 1; step <= kSteps; ++step) {
    std::vector<std::int64_t> ids;
    for (std::int64_t i = 0; i < t.global_batch_size; ++i)
      ids.push_back((step - 1) * t.global_batch_size + i);
    const auto batch = batch_of(ids, config.model.vocab_size, step,
                                static_cast<std::uint64_t>(config.run.seed), masked, packed);
    model::DropoutKey key{batch.randomness.seed, step, ids, 0};
    const auto documents = document_mask_of(batch);
    // The mean over the whole batch's targets, computed here in one piece.
    torch::Tensor loss = model.weighted_loss(
        batch.inputs, batch.targets, batch.target_mask / batch.target_mask.sum(),
        t.lora.enabled ? &key : nullptr, documents ? &*documents : nullptr);
    loss.backward();
    result.losses.push_back(loss.item<double>());
    const double norm = optim::global_grad_norm(single, pointers);
    optim::clip_grads(pointers, norm, t.grad_clip);
    adamw.step(shards, schedule.at(step), ++applied);
    for (auto* p : pointers) p->mutable_grad() = torch::Tensor();
  }
  for (std::size_t i = 0; i < params.size(); ++i)
    result.params[names[i]] = params[i].detach().clone();
  return result;
}

// Where the sharded model computes: the CPU in fp32 unless a test says otherwise.
struct Placement {
  torch::Device device = torch::kCPU;
  torch::Dtype dtype = torch::kFloat32;
  bool prefetch = false;
};

// `base`: the initial weights instead of model::InitialWeights.
Result train_sharded(const config::Config& config, comm::Communicator& comm,
                     std::int64_t micro_batch, const Placement& placement = {}, bool masked = false,
                     bool packed = false, const fsdp::ParamFiller* base = nullptr) {
  const auto& t = config.training;
  fsdp::ShardOptions options;
  options.activation_checkpointing = t.activation_checkpointing;
  options.device = placement.device;
  options.compute_dtype = placement.dtype;
  options.prefetch = placement.prefetch;
  ShardedLlama model(config.model, t.lora, false, comm, options, kSeqLen);
  if (base)
    model.initialize(*base);
  else
    model.initialize(
        model::InitialWeights(config.model, t.lora, static_cast<std::uint64_t>(config.run.seed)));
  ShardedState state(model);
  const optim::AdamW adamw({t.beta1, t.beta2, t.eps, t.weight_decay});
  const optim::LrSchedule schedule({t.lr, t.min_lr, t.warmup_steps, t.max_steps, t.lr_schedule});
  const std::int64_t per_rank = t.global_batch_size / comm.size();
  Result result;
  for (int step = 1; step <= kSteps; ++step) {
    StepSettings settings{step, per_rank / micro_batch, schedule.at(step), t.grad_clip, nullptr};
    const auto outcome = run_training_step(
        model, state, adamw, settings,
        [&](std::int64_t micro) {
          std::vector<std::int64_t> ids;
          const std::int64_t first =
              (step - 1) * t.global_batch_size + comm.rank() * per_rank + micro * micro_batch;
          for (std::int64_t i = 0; i < micro_batch; ++i) ids.push_back(first + i);
          return on_device(batch_of(ids, config.model.vocab_size, step,
                                    static_cast<std::uint64_t>(config.run.seed), masked, packed),
                           placement.device);
        },
        comm);
    EXPECT_FALSE(outcome.skipped);
    result.losses.push_back(outcome.loss);
  }
  result.params = gather_trainable(model, [](fsdp::ShardedUnit& unit) { return unit.master(); });
  return result;
}

// Relative tolerances against the unsharded fp32 CPU reference.
struct Tolerance {
  double loss = 1e-5;
  double params = 1e-5;  // max|difference| / max|parameter|
};

void expect_equivalent(const Case& c, comm::Communicator& comm, const Placement& placement = {},
                       const Tolerance& tolerance = {}) {
  const config::Config config = make_config(c);
  const std::int64_t micro = c.micro_batch > 0 ? c.micro_batch : c.global_batch / comm.size();
  const Result sharded = train_sharded(config, comm, micro, placement, c.masked, c.packed);
  const Result reference = train_unsharded(config, c.masked, c.packed);
  for (int s = 0; s < kSteps; ++s)
    EXPECT_NEAR(sharded.losses[s], reference.losses[s],
                tolerance.loss * std::abs(reference.losses[s]))
        << "step " << s + 1;
  // max |difference| / max |parameter|, both over the whole model.
  ASSERT_EQ(sharded.params.size(), reference.params.size());
  double largest = 0, worst = 0;
  std::string worst_name;
  for (const auto& [name, expected] : reference.params) {
    largest = std::max(largest, expected.abs().max().item<double>());
    const double diff = (sharded.params.at(name) - expected).abs().max().item<double>();
    if (diff > worst) worst = diff, worst_name = name;
  }
  EXPECT_LE(worst / largest, tolerance.params)
      << "largest difference in " << worst_name << ": " << worst;
  double worst_loss = 0;
  for (int s = 0; s < kSteps; ++s)
    worst_loss = std::max(worst_loss, std::abs(sharded.losses[s] / reference.losses[s] - 1));
  if (comm.rank() == 0)
    std::printf(
        "[equivalence] %d ranks on %s (%s): max relative loss difference %.2e, max|dp|/max|p| "
        "%.2e\n",
        comm.size(), placement.device.str().c_str(), c10::toString(placement.dtype), worst_loss,
        worst / largest);
}

void expect_equivalent(const Case& c) {
  auto comm = comm::MpiCommunicator::create(MPI_COMM_WORLD);
  expect_equivalent(c, *comm);
}

TEST(ShardedTraining, MatchesUnshardedWithAccumulation) {
  expect_equivalent({8, 1, false, false, true});
}
TEST(ShardedTraining, MatchesUnshardedWithoutAccumulation) {
  expect_equivalent({8, 0, false, false, true});
}
TEST(ShardedTraining, MatchesUnshardedTied) {
  expect_equivalent({8, 1, true, false, true});
}
TEST(ShardedTraining, MatchesUnshardedLoraWithDropout) {
  expect_equivalent({8, 1, false, true, true});
}
TEST(ShardedTraining, MatchesUnshardedWithoutActivationCheckpointing) {
  expect_equivalent({8, 2, true, false, false});
}
// The loss is the mean over the global batch's targets at any split: ranks
// and micro-batches hold different target counts, one sample none.
TEST(ShardedTraining, MatchesUnshardedWithLossMasks) {
  expect_equivalent({8, 1, false, false, true, true});
  expect_equivalent({8, 0, true, true, false, true});
}
// Packed rows: document-aware attention and restarted positions, recomputed
// in backward under activation checkpointing, with and without masks.
TEST(ShardedTraining, MatchesUnshardedWithPackedDocuments) {
  expect_equivalent({8, 1, false, false, true, false, true});
  expect_equivalent({8, 2, true, true, true, true, true});
}

// On GPUs (one rank per GPU, shard collectives over NCCL): fp32 compute
// matches the fp32 CPU reference up to the order of floating-point sums;
// bf16 compute (fp32 masters, gradients and reductions) within bf16 rounding.
TEST(ShardedTraining, CudaMatchesUnshardedCpu) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  auto mpi = comm::MpiCommunicator::create(MPI_COMM_WORLD);
  const auto gpus = static_cast<int>(torch::cuda::device_count());
  if (mpi->local_size() > gpus)
    GTEST_SKIP() << "NCCL needs one GPU per rank: " << gpus << " visible";
  auto nccl = comm::make_nccl_communicator(MPI_COMM_WORLD, mpi->local_rank(), nullptr);
  const torch::Device gpu(torch::kCUDA, static_cast<c10::DeviceIndex>(mpi->local_rank()));
  // As the trainer runs on GPUs: the next unit's gather prefetched.
  expect_equivalent({8, 1, false, false, true}, *nccl, {gpu, torch::kFloat32, true}, {1e-5, 1e-4});
  expect_equivalent({8, 2, true, true, false}, *nccl, {gpu, torch::kFloat32, true}, {1e-5, 1e-4});
  expect_equivalent({8, 1, false, false, true}, *nccl, {gpu, torch::kBFloat16, true}, {2e-2, 5e-2});
}

TEST(ShardedTraining, UnitSizesNeedPadding) {
  auto comm = comm::MpiCommunicator::create(MPI_COMM_WORLD);
  const config::Config config = make_config({});
  ShardedLlama model(config.model, config.training.lora, false, *comm, {}, kSeqLen);
  // 259 x 50 embedding = 12950 elements: not a multiple of 4 (nor of 3).
  EXPECT_EQ(model.units()[0]->layout().numel(true), 12950);
  if (comm->size() == 4) {
    EXPECT_EQ(model.units()[0]->layout().padded(true), 12952);
  }
}

TEST(ShardedTraining, BitwiseDeterministic) {
  auto comm = comm::MpiCommunicator::create(MPI_COMM_WORLD);
  const config::Config config = make_config({8, 1, true, true, true});
  const Result a = train_sharded(config, *comm, 1);
  const Result b = train_sharded(config, *comm, 1);
  for (int s = 0; s < kSteps; ++s) EXPECT_EQ(a.losses[s], b.losses[s]);
  for (const auto& [name, tensor] : a.params)
    EXPECT_TRUE(torch::equal(tensor, b.params.at(name))) << name;
}

// Prefetching the next unit's gather changes when it is gathered, never what:
// bitwise the same training, full fine-tuning and LoRA (whose embedding has no
// backward to prefetch for), with and without recompute.
TEST(ShardedTraining, PrefetchChangesNothing) {
  auto comm = comm::MpiCommunicator::create(MPI_COMM_WORLD);
  for (const Case& c : {Case{8, 1, true, false, true}, Case{8, 1, false, true, true},
                        Case{8, 2, false, false, false}}) {
    const config::Config config = make_config(c);
    const Result plain = train_sharded(config, *comm, c.micro_batch);
    const Result prefetched =
        train_sharded(config, *comm, c.micro_batch, {torch::kCPU, torch::kFloat32, true});
    for (int s = 0; s < kSteps; ++s) EXPECT_EQ(plain.losses[s], prefetched.losses[s]);
    for (const auto& [name, tensor] : plain.params)
      EXPECT_TRUE(torch::equal(tensor, prefetched.params.at(name))) << name;
  }
}

// The initial weights with each projection's base weight replaced by
// dequant(quant(W)) of the whole tensor: what a QLoRA run computes with.
fsdp::ParamFiller round_tripped_base(const config::Config& config, bool double_quant) {
  auto weights = std::make_shared<model::InitialWeights>(
      config.model, config.training.lora, static_cast<std::uint64_t>(config.run.seed));
  config::LoraConfig quantized = config.training.lora;
  quantized.quantize_base = config::QuantizeBase::kNf4;
  auto specs = std::make_shared<std::vector<model::ParamSpec>>(
      model::all_parameters(config.model, quantized));
  return [=](const fsdp::FlatParam& param, std::int64_t offset, std::int64_t count, float* out) {
    for (const auto& spec : *specs) {
      if (spec.name != param.name) continue;
      if (!spec.quantized) return weights->fill(spec, offset, count, out);
      std::vector<float> whole(static_cast<std::size_t>(spec.numel()));
      std::vector<float> round_trip(whole.size());
      weights->fill(spec, 0, spec.numel(), whole.data());
      quant::nf4_round_trip(whole.data(), spec.numel(), double_quant, round_trip.data());
      std::copy_n(round_trip.begin() + offset, count, out);
      return;
    }
    FAIL() << "no parameter " << param.name;
  };
}

// QLoRA trains exactly what LoRA trains on the round-tripped base: the NF4
// bytes a rank quantises, gathers (also prefetched) and dequantises change
// nothing, bit for bit, with and without double quantisation and recompute.
TEST(ShardedTraining, QloraEqualsLoraOnTheDequantisedBase) {
  auto comm = comm::MpiCommunicator::create(MPI_COMM_WORLD);
  for (const bool double_quant : {false, true}) {
    for (const Case& c : {Case{8, 1, false, true, true}, Case{8, 2, true, true, false}}) {
      config::Config lora = make_config(c);
      lora.training.lora.targets = {"q_proj", "v_proj", "gate_proj", "down_proj"};
      config::Config qlora = lora;
      qlora.training.lora.quantize_base = config::QuantizeBase::kNf4;
      qlora.training.lora.double_quant = double_quant;
      const fsdp::ParamFiller base = round_tripped_base(lora, double_quant);
      const Result expected = train_sharded(lora, *comm, c.micro_batch, {}, false, false, &base);
      // The round trip changes the base: the comparison below is not vacuous.
      EXPECT_NE(train_sharded(lora, *comm, c.micro_batch).losses[0], expected.losses[0]);
      for (const bool prefetch : {false, true}) {
        const Result quantized =
            train_sharded(qlora, *comm, c.micro_batch, {torch::kCPU, torch::kFloat32, prefetch});
        for (int s = 0; s < kSteps; ++s)
          EXPECT_EQ(quantized.losses[s], expected.losses[s]) << "step " << s + 1;
        ASSERT_EQ(quantized.params.size(), expected.params.size());
        for (const auto& [name, tensor] : expected.params)
          EXPECT_TRUE(torch::equal(tensor, quantized.params.at(name)))
              << name << " double_quant " << double_quant << " prefetch " << prefetch;
      }
    }
  }
}

// One step of a fresh model whose micro-batches `batch(micro)` makes, and
// whether it left every master as it was.
struct SkippedStep {
  StepOutcome outcome;
  bool masters_unchanged = true;
  bool gradients_dropped = true;
  std::int64_t applied_updates = 0;
};

SkippedStep one_step(std::int64_t micro_steps,
                     const std::function<MicroBatchTensors(std::int64_t)>& batch) {
  auto comm = comm::MpiCommunicator::create(MPI_COMM_WORLD);
  const config::Config config = make_config({});
  const auto& t = config.training;
  ShardedLlama model(config.model, t.lora, false, *comm, {}, kSeqLen);
  model.initialize(model::InitialWeights(config.model, t.lora, 1));
  ShardedState state(model);
  const optim::AdamW adamw({t.beta1, t.beta2, t.eps, t.weight_decay});
  std::vector<torch::Tensor> before;
  for (auto* master : state.masters()) before.push_back(master->detach().clone());
  SkippedStep result;
  result.outcome =
      run_training_step(model, state, adamw, {1, micro_steps, 0.01, 1.0, nullptr}, batch, *comm);
  result.applied_updates = state.applied_updates;
  const auto masters = state.masters();
  for (std::size_t i = 0; i < masters.size(); ++i) {
    result.masters_unchanged =
        result.masters_unchanged && torch::equal(masters[i]->detach(), before[i]) &&
        state.tensor(i, fsdp::StateTensor::kExpAvg).abs().sum().item<float>() == 0;
    result.gradients_dropped = result.gradients_dropped && !masters[i]->grad().defined();
  }
  return result;
}

TEST(ShardedTraining, NonFiniteStepIsSkippedEverywhere) {
  const int rank = comm::MpiCommunicator::create(MPI_COMM_WORLD)->rank();
  // An infinite loss weight makes the loss and every gradient non-finite.
  const SkippedStep step = one_step(1, [&](std::int64_t) {
    auto batch = batch_of({rank}, make_config({}).model.vocab_size, 1, 1);
    batch.target_mask.fill_(std::numeric_limits<float>::infinity());
    return batch;
  });
  EXPECT_TRUE(step.outcome.skipped);
  EXPECT_EQ(step.applied_updates, 0);
  EXPECT_TRUE(step.masters_unchanged);
  EXPECT_TRUE(step.gradients_dropped);
}

// A global batch without a target token (each rank's samples masked out)
// teaches nothing: skipped on every rank, nothing applied, counted.
TEST(ShardedTraining, StepWithoutTargetsIsSkippedEverywhere) {
  const int rank = comm::MpiCommunicator::create(MPI_COMM_WORLD)->rank();
  const SkippedStep step = one_step(2, [&](std::int64_t micro) {
    return batch_of({7 * (2 * rank + micro) + 3}, make_config({}).model.vocab_size, 1, 1, true);
  });
  EXPECT_TRUE(step.outcome.skipped);
  EXPECT_EQ(step.outcome.target_tokens, 0);
  EXPECT_EQ(step.applied_updates, 0);
  EXPECT_TRUE(step.masters_unchanged);
}

TEST(ShardedTraining, TrafficMatchesTheFormula) {
  auto comm = comm::MpiCommunicator::create(MPI_COMM_WORLD);
  for (const bool tied : {false, true}) {
    const config::Config config = make_config({8, 1, tied, false, true});
    ShardedLlama model(config.model, config.training.lora, false, *comm, {}, kSeqLen);
    model.initialize(model::InitialWeights(config.model, config.training.lora, 1));
    comm->reset_stats();
    const auto batch = batch_of({0}, config.model.vocab_size, 1, 1);
    model.loss(batch.inputs, batch.targets, batch.target_mask, nullptr).backward();
    double psi_all = 0, psi_trainable = 0;
    for (auto& unit : model.units()) {
      psi_all += static_cast<double>(unit->layout().padded(true) + unit->layout().padded(false));
      psi_trainable += static_cast<double>(unit->layout().padded(true));
    }
    if (tied) {  // the embedding is gathered again by the head, and reduced there too
      psi_all += static_cast<double>(model.units()[0]->layout().padded(true));
      psi_trainable += static_cast<double>(model.units()[0]->layout().padded(true));
    }
    const double n = comm->size();
    const auto stats = comm->stats();
    EXPECT_DOUBLE_EQ(stats[comm::CollectiveKind::kAllGather].bytes +
                         stats[comm::CollectiveKind::kReduceScatter].bytes,
                     (n - 1) / n * (2 * psi_all * 4 + psi_trainable * 4));
  }
}

// QLoRA gathers the quantised projections as NF4 bytes: Q per gather instead
// of their padded elements in the compute dtype (docs/architecture.md); the
// frozen embedding has no backward, so it is gathered once.
TEST(ShardedTraining, QloraTrafficMatchesTheFormula) {
  auto comm = comm::MpiCommunicator::create(MPI_COMM_WORLD);
  for (const bool double_quant : {false, true}) {
    config::Config config = make_config({8, 1, false, true, true});
    config.training.lora.quantize_base = config::QuantizeBase::kNf4;
    config.training.lora.double_quant = double_quant;
    ShardedLlama model(config.model, config.training.lora, false, *comm, {}, kSeqLen);
    model.initialize(model::InitialWeights(config.model, config.training.lora, 1));
    comm->reset_stats();
    const auto batch = batch_of({0}, config.model.vocab_size, 1, 1);
    model.loss(batch.inputs, batch.targets, batch.target_mask, nullptr).backward();
    double psi_all = 0, psi_trainable = 0, nf4 = 0;
    for (auto& unit : model.units()) {
      psi_all += static_cast<double>(unit->layout().padded(true) + unit->layout().padded(false));
      psi_trainable += static_cast<double>(unit->layout().padded(true));
      nf4 += static_cast<double>(
          quant::nf4_storage(unit->layout().quantized_padded(), double_quant).total());
    }
    EXPECT_GT(nf4, 0);
    const double embedding = static_cast<double>(model.units()[0]->layout().padded(false));
    const double n = comm->size();
    const auto stats = comm->stats();
    EXPECT_DOUBLE_EQ(stats[comm::CollectiveKind::kAllGather].bytes +
                         stats[comm::CollectiveKind::kReduceScatter].bytes,
                     (n - 1) / n * (2 * (psi_all * 4 + nf4) - embedding * 4 + psi_trainable * 4));
  }
}

}  // namespace
}  // namespace nss::train
