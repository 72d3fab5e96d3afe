// The chunked fused linear + cross-entropy head (model/chunked_head.h)
// against the unfused head: loss and gradients (hidden input, final norm,
// head weight) at chunk sizes that do and do not divide the token count,
// with and without loss masks, tied and untied, with a frozen head weight;
// and the head's peak memory at a 128k vocabulary with and without chunks.
#include "model/chunked_head.h"

#include <cstdio>
#include <tuple>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "memory/memory_meter.h"
#include "model/llama_functional.h"

namespace nss::model {
namespace {

constexpr std::int64_t kBatch = 2, kSeq = 11, kHidden = 24, kVocab = 97;
constexpr std::int64_t kTokens = kBatch * kSeq;

config::ModelConfig tiny_model() {
  config::ModelConfig m;
  m.hidden_size = kHidden;
  m.vocab_size = kVocab;
  m.rms_norm_eps = 1e-5;
  return m;
}

struct HeadInputs {
  torch::Tensor embedding;  // [V, H]: the input's source and, tied, the head weight
  torch::Tensor lm_head;    // [V, H], untied
  torch::Tensor norm;       // [H]
  torch::Tensor tokens, targets, weights;
};

// A frozen tied head is a frozen embedding (LoRA): only the norm trains.
HeadInputs inputs(bool masked, bool head_trains, bool tied = false) {
  torch::manual_seed(7);
  HeadInputs in;
  in.embedding = torch::randn({kVocab, kHidden}).requires_grad_(!tied || head_trains);
  in.lm_head = (torch::randn({kVocab, kHidden}) * 0.5).requires_grad_(head_trains);
  in.norm = (1 + 0.1 * torch::randn({kHidden})).requires_grad_(true);
  in.tokens = torch::randint(kVocab, {kBatch, kSeq});
  in.targets = torch::randint(kVocab, {kBatch, kSeq});
  torch::Tensor mask = torch::ones({kBatch, kSeq});
  if (masked) mask.narrow(1, 0, 4).zero_();  // a prompt outside the loss
  in.weights = mask / mask.sum();
  return in;
}

struct HeadResult {
  torch::Tensor loss, grad_embedding, grad_lm_head, grad_norm;
};

// The head after an embedding lookup (so a tied weight gets both uses'
// gradient), backward from 3 x loss (the stored gradients are scaled).
HeadResult run_head(bool tied, bool masked, bool head_trains, std::int64_t chunk) {
  HeadInputs in = inputs(masked, head_trains, tied);
  const torch::Tensor hidden =
      embedding_forward(in.tokens, in.embedding, arch::describe(tiny_model())) * 1.5;
  const torch::Tensor& head = tied ? in.embedding : in.lm_head;
  HeadResult r;
  r.loss = head_loss_forward(hidden, in.norm, head, in.targets, in.weights, tiny_model(), chunk);
  (3 * r.loss).backward();
  r.grad_embedding = in.embedding.grad();
  r.grad_lm_head = in.lm_head.grad();
  r.grad_norm = in.norm.grad();
  return r;
}

void expect_close(const torch::Tensor& actual, const torch::Tensor& expected, const char* what) {
  ASSERT_EQ(actual.defined(), expected.defined()) << what;
  if (!expected.defined()) return;
  const double scale = expected.abs().max().item<double>();
  const double difference = (actual - expected).abs().max().item<double>();
  EXPECT_LE(difference, 1e-5 * scale) << what;
}

class ChunkedHead : public ::testing::TestWithParam<std::tuple<std::int64_t, bool, bool, bool>> {};

TEST_P(ChunkedHead, EqualsUnfusedHead) {
  const auto [chunk, tied, masked, head_trains] = GetParam();
  const HeadResult unfused = run_head(tied, masked, head_trains, 0);
  const HeadResult chunked = run_head(tied, masked, head_trains, chunk);
  expect_close(chunked.loss, unfused.loss, "loss");
  expect_close(chunked.grad_embedding, unfused.grad_embedding, "hidden input (embedding)");
  expect_close(chunked.grad_norm, unfused.grad_norm, "norm weight");
  expect_close(chunked.grad_lm_head, unfused.grad_lm_head, "head weight");
  if (!head_trains) {
    EXPECT_FALSE(chunked.grad_lm_head.defined());
  }
}

INSTANTIATE_TEST_SUITE_P(ChunkSizes, ChunkedHead,
                         ::testing::Combine(::testing::Values(1, 3, 7, kTokens, kTokens + 5),
                                            ::testing::Bool(), ::testing::Bool(),
                                            ::testing::Bool()));

// Without grad mode (the checkpointed forward) the loss alone, the same.
TEST(ChunkedHeadLoss, WithoutGradModeComputesTheSameLoss) {
  HeadInputs in = inputs(true, true);
  torch::NoGradGuard no_grad;
  const torch::Tensor hidden =
      embedding_forward(in.tokens, in.embedding, arch::describe(tiny_model()));
  const torch::Tensor unfused =
      head_loss_forward(hidden, in.norm, in.lm_head, in.targets, in.weights, tiny_model(), 0);
  const torch::Tensor chunked =
      head_loss_forward(hidden, in.norm, in.lm_head, in.targets, in.weights, tiny_model(), 5);
  EXPECT_FALSE(chunked.requires_grad());
  expect_close(chunked, unfused, "loss");
}

// A weight with a row per example (DP-SGD's per-example leaves) is not the
// chunked head's: head_loss_forward keeps it on the unfused path, and the
// chunked function refuses it.
TEST(ChunkedHeadLoss, RefusesPerExampleWeights) {
  HeadInputs in = inputs(false, false);
  const torch::Tensor normed = torch::randn({kTokens, kHidden});
  EXPECT_THROW(chunked_linear_cross_entropy(
                   normed, in.lm_head.detach().unsqueeze(0).expand({kBatch, kVocab, kHidden}),
                   in.targets.reshape({-1}), in.weights.reshape({-1}), 4),
               std::exception);
}

// The head's forward and backward at a 128k vocabulary, hidden 64, 2048
// tokens: the peak of live tensor bytes (the counting CPU allocator) with
// the unfused head and with 512-token chunks. Printed, never asserted beyond
// the chunked head staying below the full logits' size.
TEST(ChunkedHeadMemory, PeakAt128kVocabulary) {
  constexpr std::int64_t vocab = 128256, hidden = 64, tokens = 2048;
  const auto meter = memory::make_memory_meter(torch::kCPU);
  config::ModelConfig model;
  model.hidden_size = hidden;
  model.vocab_size = vocab;
  torch::manual_seed(3);
  const torch::Tensor weight = (torch::randn({vocab, hidden}) * 0.02).requires_grad_(true);
  const torch::Tensor norm = torch::ones({hidden}).requires_grad_(true);
  const torch::Tensor targets = torch::randint(vocab, {1, tokens});
  const torch::Tensor weights = torch::full({1, tokens}, 1.0 / tokens);
  const double logits_mib = static_cast<double>(tokens * vocab * 4) / (1 << 20);
  std::printf(
      "[chunked head] vocab %lld, hidden %lld, tokens %lld: fp32 logits %.1f MiB, "
      "head weight %.1f MiB\n",
      static_cast<long long>(vocab), static_cast<long long>(hidden), static_cast<long long>(tokens),
      logits_mib, static_cast<double>(vocab * hidden * 4) / (1 << 20));
  double chunked_peak = 0;
  for (const std::int64_t chunk : {std::int64_t{0}, std::int64_t{512}, std::int64_t{128}}) {
    const torch::Tensor hidden_states = torch::randn({1, tokens, hidden}).requires_grad_(true);
    const std::int64_t before = meter->bytes_now();
    meter->reset_peak();
    torch::Tensor loss =
        head_loss_forward(hidden_states, norm, weight, targets, weights, model, chunk);
    loss.backward();
    loss = torch::Tensor();
    const double peak = static_cast<double>(meter->peak_bytes() - before) / (1 << 20);
    std::printf("[chunked head] loss_chunk_tokens %4lld: peak above the inputs %.1f MiB\n",
                static_cast<long long>(chunk), peak);
    if (chunk == 512) chunked_peak = peak;
    weight.mutable_grad() = torch::Tensor();
    norm.mutable_grad() = torch::Tensor();
  }
  EXPECT_LT(chunked_peak, logits_mib);
}

}  // namespace
}  // namespace nss::model
