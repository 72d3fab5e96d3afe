// Sharded training against an unsharded single-process reference: the same
// 8 steps at 1, 2 and 4 ranks give the same losses (relative 1e-5) and the
// same final parameters (max|diff| / max|p| <= 1e-5) as plain autograd on
// whole tensors, for gradient accumulation on and off, tied and untied
// embeddings, LoRA (with dropout), activation checkpointing full, selective
// and none, and a unit whose size does not divide by the world size. Also: bitwise
// determinism, skipped non-finite steps, and the traffic formula.
#include <cmath>

#include <gtest/gtest.h>
#include <torch/cuda.h>
#include <torch/torch.h>

#include "arch/architecture.h"
#include "comm/mpi_communicator.h"
#include "config/load.h"
#include "equivalence.h"
#include "model/initial_weights.h"
#include "model/llama_model.h"
#include "model/param_spec.h"
#include "optim/adamw.h"
#include "quant/nf4_storage.h"
#include "support/cuda_ranks.h"
#include "tiny_batches.h"
#include "train/sharded_llama.h"
#include "train/training_step.h"

namespace nss::train {
namespace {

using testing::batch_of;
using testing::Case;
using testing::expect_equivalent;
using testing::gather_trainable;
using testing::kSeqLen;
using testing::kSteps;
using testing::make_config;
using testing::Result;
using testing::train_sharded;

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

// The chunked fused head (training.loss_chunk_tokens) with chunks that do not
// divide a micro-batch's tokens (12 a row), recomputed under checkpointing
// or kept, tied and untied, masked, under LoRA (a frozen head weight); and
// the unchunked head (0).
TEST(ShardedTraining, MatchesUnshardedWithChunkedHead) {
  Case c{8, 1, false, false, true};
  c.loss_chunk_tokens = 5;
  expect_equivalent(c);
  c = {8, 2, true, false, false, true};
  c.loss_chunk_tokens = 7;
  expect_equivalent(c);
  c = {8, 1, true, true, true, true};
  c.loss_chunk_tokens = 1;
  expect_equivalent(c);
  c = {8, 0, false, false, true};
  c.loss_chunk_tokens = 0;
  expect_equivalent(c);
}

// Every family's features shard as Llama's do: windows, biases, q/k norms,
// layers without RoPE, sandwich and (1 + weight) norms, GeGLU, the scaled
// embedding and queries; with LoRA, loss masks and packed rows too. The
// parameters within 1e-4: Gemma's embedding scaled by sqrt(hidden) into a
// tied head and GeGLU's saturating gate amplify the order of fp32 sums
// through AdamW's normalisation (6.5e-5 at one rank, where Llama's stay
// near 1e-6; the losses agree to 1e-7 either way).
TEST(ShardedTraining, EveryFamilyMatchesUnsharded) {
  auto comm = comm::MpiCommunicator::create(MPI_COMM_WORLD);
  testing::Tolerance tolerance;
  tolerance.params = 1e-4;
  for (const auto& family : arch::families()) {
    SCOPED_TRACE(family.name);
    Case c{8, 1, true, false, true};
    c.family = family.name;
    testing::expect_equivalent(c, *comm, {}, tolerance);
    c = {8, 2, false, true, false, true, true};
    c.family = family.name;
    testing::expect_equivalent(c, *comm, {}, tolerance);
  }
}

// On GPUs (one rank per GPU, shard collectives over NCCL): fp32 compute
// matches the fp32 CPU reference up to the order of floating-point sums;
// bf16 compute (fp32 masters, gradients and reductions) within bf16 rounding.
TEST(ShardedTraining, CudaMatchesUnshardedCpu) {
  NSS_CUDA_RANKS_OR_SKIP(cuda);
  const torch::Device gpu = cuda.device;
  comm::Communicator& nccl = *cuda.nccl;
  // As the trainer runs on GPUs: the next unit's gather prefetched.
  expect_equivalent({8, 1, false, false, true}, nccl, {gpu, torch::kFloat32, true}, {1e-5, 1e-4});
  expect_equivalent({8, 2, true, true, false}, nccl, {gpu, torch::kFloat32, true}, {1e-5, 1e-4});
  expect_equivalent({8, 1, false, false, true}, nccl, {gpu, torch::kBFloat16, true}, {2e-2, 5e-2});
}

// Packed rows on a GPU, recomputed in backward: the block-diagonal mask, or
// with NSS_VARLEN_ATTENTION=1 the variable-length kernel (bf16 only; fp32
// keeps the mask), within bf16 rounding of the fp32 CPU reference. Selective
// recompute keeps SDPA's output rather than the CPU path's weights.
TEST(ShardedTraining, CudaPackedDocumentsMatchUnshardedCpu) {
  NSS_CUDA_RANKS_OR_SKIP(cuda);
  const torch::Device gpu = cuda.device;
  comm::Communicator& nccl = *cuda.nccl;
  Case packed{8, 1, false, false, true, false, true};
  expect_equivalent(packed, nccl, {gpu, torch::kBFloat16, true}, {2e-2, 5e-2});
  packed.masked = true;
  packed.selective = true;
  expect_equivalent(packed, nccl, {gpu, torch::kBFloat16, true}, {2e-2, 5e-2});
}

TEST(ShardedTraining, UnitSizesNeedPadding) {
  auto comm = comm::MpiCommunicator::create(MPI_COMM_WORLD);
  const config::Config config = make_config({});
  ShardedLlama model(config.model, config.training.lora, false, *comm, {}, torch::kCPU, kSeqLen);
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

// Selective recompute keeps each block's attention from forward and
// recomputes the rest: the same training as full recompute, bit for bit —
// full fine-tuning with grouped-query attention and accumulation, tied, LoRA
// with dropout (its masks replayed around the kept attention), loss masks,
// packed documents (attention per document), the chunked head, prefetch;
// Gemma 3 and Qwen3 with LoRA on packed documents (Gemma's windows inside
// them, q/k and sandwich norms) — and within the reference's tolerance of
// plain autograd.
TEST(ShardedTraining, SelectiveRecomputeEqualsFullBitwise) {
  auto comm = comm::MpiCommunicator::create(MPI_COMM_WORLD);
  Case gemma3{8, 1, false, true, true, false, true};
  gemma3.family = "gemma3";
  Case qwen3{8, 2, true, true, true, true, true};
  qwen3.family = "qwen3";
  for (Case c : {Case{8, 1, false, false, true}, Case{8, 2, true, false, true, true},
                 Case{8, 1, false, true, true, false, true},
                 Case{8, 0, true, true, true, true, true, 5}, gemma3, qwen3}) {
    const std::int64_t micro = c.micro_batch > 0 ? c.micro_batch : c.global_batch / comm->size();
    const Result full = train_sharded(make_config(c), *comm, micro, {}, c.masked, c.packed);
    c.selective = true;
    const config::Config selective = make_config(c);
    for (const bool prefetch : {false, true}) {
      const Result kept = train_sharded(
          selective, *comm, micro, {torch::kCPU, torch::kFloat32, prefetch}, c.masked, c.packed);
      for (int s = 0; s < kSteps; ++s)
        EXPECT_EQ(kept.losses[s], full.losses[s]) << "step " << s + 1;
      for (const auto& [name, tensor] : full.params)
        EXPECT_TRUE(torch::equal(tensor, kept.params.at(name))) << name;
    }
    testing::Tolerance tolerance;  // as EveryFamilyMatchesUnsharded's, for Gemma 3
    tolerance.params = 1e-4;
    testing::expect_equivalent(c, *comm, {}, tolerance);
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
  return [=](const layout::FlatParam& param, std::int64_t offset, std::int64_t count, float* out) {
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
    Case gemma3{8, 1, true, true, true, false, true};
    gemma3.family = "gemma3";
    Case qwen3{8, 2, false, true, false};
    qwen3.family = "qwen3";
    for (const Case& c :
         {Case{8, 1, false, true, true}, Case{8, 2, true, true, false}, gemma3, qwen3}) {
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
  ShardedLlama model(config.model, t.lora, false, *comm, {}, torch::kCPU, kSeqLen);
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
        state.tensor(i, layout::StateTensor::kExpAvg).abs().sum().item<float>() == 0;
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
    ShardedLlama model(config.model, config.training.lora, false, *comm, {}, torch::kCPU, kSeqLen);
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
    ShardedLlama model(config.model, config.training.lora, false, *comm, {}, torch::kCPU, kSeqLen);
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
