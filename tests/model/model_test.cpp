// The libtorch model: parameter counts of the built model, RoPE against its
// closed forms, equivalences (GQA vs MHA, tied vs untied, LoRA with B = 0),
// causality, LoRA dropout replay and batch-split independence, unit slices,
// the activation size table against the forward's tensors.
#include <cmath>
#include <cstdlib>
#include <string>
#include <tuple>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "config/model_presets.h"
#include "core/error.h"
#include "model/block_activations.h"
#include "model/initial_weights.h"
#include "model/layer_plan.h"
#include "model/llama_functional.h"
#include "model/llama_model.h"
#include "model/param_spec.h"
#include "model/rotary_embedding.h"
#include "model/varlen_attention.h"

namespace nss::model {
namespace {

config::ModelConfig preset(const std::string& name) {
  config::ModelConfig m;
  EXPECT_TRUE(config::apply_model_preset(name, m));
  return m;
}

config::LoraConfig lora_on(double dropout = 0.0) {
  config::LoraConfig lora;
  lora.enabled = true;
  lora.rank = 4;
  lora.alpha = 8;
  lora.dropout = dropout;
  lora.targets = projection_names();
  return lora;
}

LlamaModel build(const config::ModelConfig& m, const config::LoraConfig& lora, std::uint64_t seed) {
  LlamaModel model(m, lora, torch::kFloat32);
  model.load(InitialWeights(m, lora, seed));
  return model;
}

torch::Tensor tokens_for(const config::ModelConfig& m, std::int64_t batch, std::int64_t seq,
                         std::uint64_t seed = 0) {
  torch::manual_seed(seed);
  return torch::randint(m.vocab_size, {batch, seq}, torch::kInt64);
}

double max_difference(const torch::Tensor& a, const torch::Tensor& b) {
  return (a - b).abs().max().item<double>();
}

TEST(LlamaModel, BuiltModelMatchesExactCounts) {
  for (const auto& name : config::preset_names()) {
    for (const auto& lora : {config::LoraConfig{}, lora_on()}) {
      const auto m = preset(name);
      const LlamaModel model(m, lora, torch::TensorOptions().device(torch::kMeta));
      std::int64_t total = 0, trainable = 0;
      for (int unit = 0; unit < model.num_units(); ++unit)
        for (const auto& t : model.unit_tensors(unit)) {
          total += t.numel();
          if (t.requires_grad()) trainable += t.numel();
        }
      const ParameterCount count = count_parameters(m, lora);
      EXPECT_EQ(total, count.total) << name;
      EXPECT_EQ(trainable, count.trainable) << name;
    }
  }
  const auto m = preset("tiny");
  LlamaModel meta(m, {}, torch::TensorOptions().device(torch::kMeta));
  EXPECT_THROW(meta.load(InitialWeights(m, {}, 1)), InternalError);
}

// inv_freq from the published formulas, in double precision.
std::vector<double> closed_form_frequencies(const config::ModelConfig& m) {
  std::vector<double> f;
  const auto& r = m.rope_scaling;
  for (std::int64_t i = 0; i < m.head_dim / 2; ++i) {
    const double base = std::pow(m.rope_theta, -2.0 * i / m.head_dim);
    if (r.type == config::RopeScaling::kLinear) {
      f.push_back(base / r.factor);
    } else if (r.type == config::RopeScaling::kLlama3) {
      const double wavelen = 2 * M_PI / base;
      const double old = static_cast<double>(r.original_max_position_embeddings);
      if (wavelen < old / r.high_freq_factor) {
        f.push_back(base);
      } else if (wavelen > old / r.low_freq_factor) {
        f.push_back(base / r.factor);
      } else {
        const double smooth =
            (old / wavelen - r.low_freq_factor) / (r.high_freq_factor - r.low_freq_factor);
        f.push_back((1 - smooth) * base / r.factor + smooth * base);
      }
    } else {
      f.push_back(base);
    }
  }
  return f;
}

void expect_rope_closed_form(const config::ModelConfig& m) {
  const std::int64_t positions = 64, half = m.head_dim / 2;
  const RotaryEmbedding rope(m, positions, torch::kCPU);
  const auto f = closed_form_frequencies(m);
  const auto inv = rope_inverse_frequencies(m);
  for (std::int64_t i = 0; i < half; ++i)
    EXPECT_NEAR(inv[i].item<double>() / f[i], 1.0, 1e-6)
        << config::choice_name(m.rope_scaling.type) << " i=" << i;
  // apply() on the unit vector e_i at position s rotates the pair (i, i + half) by s * f_i.
  for (std::int64_t i = 0; i < half; ++i) {
    torch::Tensor x = torch::zeros({1, 1, positions, m.head_dim});
    x.select(3, i).fill_(1.0f);
    const torch::Tensor y = rope.apply(x);
    for (std::int64_t s = 0; s < positions; s += 7) {
      EXPECT_NEAR(y[0][0][s][i].item<double>(), std::cos(s * f[i]), 1e-5);
      EXPECT_NEAR(y[0][0][s][i + half].item<double>(), std::sin(s * f[i]), 1e-5);
    }
  }
}

TEST(Rope, NoScalingLinearAndLlama3MatchClosedForms) {
  auto m = preset("tiny");
  expect_rope_closed_form(m);
  m.rope_scaling.type = config::RopeScaling::kLinear;
  m.rope_scaling.factor = 4;
  expect_rope_closed_form(m);
  auto llama = preset("llama-3.2-1b");  // llama3, factor 32: all three frequency bands occur
  const auto f = closed_form_frequencies(llama);
  expect_rope_closed_form(llama);
  config::ModelConfig no_scaling = llama;
  no_scaling.rope_scaling.type = config::RopeScaling::kNone;
  const auto unscaled = closed_form_frequencies(no_scaling);
  int high = 0, low = 0, medium = 0;
  for (std::size_t i = 0; i < f.size(); ++i) {
    if (f[i] == unscaled[i])
      ++high;
    else if (std::abs(f[i] * 32 - unscaled[i]) < 1e-15)
      ++low;
    else
      ++medium;
  }
  EXPECT_GT(high, 0);
  EXPECT_GT(low, 0);
  EXPECT_GT(medium, 0);
}

TEST(LlamaModel, GroupedQueryAttentionEqualsMultiHeadWithRepeatedKeyValues) {
  auto gqa_config = preset("tiny");  // 4 query heads, 2 key/value heads
  const auto gqa = build(gqa_config, {}, 11);
  auto mha_config = gqa_config;
  mha_config.num_key_value_heads = 4;
  LlamaModel mha = build(mha_config, {}, 12);
  torch::NoGradGuard no_grad;
  const std::int64_t d = gqa_config.head_dim;
  for (int unit = 0; unit < gqa.num_units(); ++unit)
    for (std::size_t i = 0; i < gqa.unit_specs(unit).size(); ++i) {
      const std::string& name = gqa.unit_specs(unit)[i].name;
      torch::Tensor source = gqa.unit_tensors(unit)[i];
      if (name.find("k_proj") != std::string::npos || name.find("v_proj") != std::string::npos)
        source = source.view({2, 1, d, -1}).expand({2, 2, d, source.size(1)}).reshape({4 * d, -1});
      mha.parameter(name).copy_(source);
    }
  const auto tokens = tokens_for(gqa_config, 2, 12);
  EXPECT_LT(max_difference(gqa.logits(tokens), mha.logits(tokens)), 1e-5);
}

TEST(LlamaModel, TiedEqualsUntiedWithCopiedHead) {
  auto tied_config = preset("tiny");
  tied_config.tie_word_embeddings = true;
  const auto tied = build(tied_config, {}, 5);
  auto untied_config = tied_config;
  untied_config.tie_word_embeddings = false;
  const auto untied = build(untied_config, {}, 5);
  {
    torch::NoGradGuard no_grad;
    untied.parameter("lm_head.weight").copy_(untied.parameter("model.embed_tokens.weight"));
  }
  EXPECT_TRUE(tied.parameter("model.embed_tokens.weight")
                  .equal(untied.parameter("model.embed_tokens.weight")));
  const auto tokens = tokens_for(tied_config, 2, 10);
  EXPECT_TRUE(tied.logits(tokens).equal(untied.logits(tokens)));
  EXPECT_THROW(tied.parameter("lm_head.weight"), InternalError);
}

TEST(LlamaModel, AttentionIsCausal) {
  const auto m = preset("tiny");
  const auto model = build(m, {}, 2);
  torch::Tensor tokens = tokens_for(m, 1, 12);
  const torch::Tensor before = model.logits(tokens);
  tokens[0][6] = (tokens[0][6].item<std::int64_t>() + 1) % m.vocab_size;
  const torch::Tensor after = model.logits(tokens);
  EXPECT_TRUE(before.narrow(1, 0, 6).equal(after.narrow(1, 0, 6)));
  EXPECT_GT(max_difference(before.narrow(1, 6, 6), after.narrow(1, 6, 6)), 1e-4);
}

// Packed rows: a document's logits are those it has alone (attention kept
// inside it, RoPE restarted at 0), whatever else shares its row; padding
// never reaches a document.
TEST(LlamaModel, PackedDocumentsSeeOnlyThemselves) {
  const auto m = preset("tiny");
  const auto model = build(m, lora_on(), 5);
  const torch::Tensor a = tokens_for(m, 1, 5, 1), b = tokens_for(m, 1, 7, 2);
  const auto row_of = [&](const torch::Tensor& first, const torch::Tensor& second) {
    return torch::cat({first, second, torch::zeros({1, 4}, torch::kInt64)}, 1);
  };
  const torch::Tensor positions =
      torch::cat({torch::arange(5), torch::arange(7), torch::arange(4)}).unsqueeze(0);
  const torch::Tensor segments = torch::cat({torch::zeros(5), torch::ones(7), torch::full({4}, -1)})
                                     .to(torch::kInt64)
                                     .unsqueeze(0);
  for (const auto how : {DocumentAttention::kMask, DocumentAttention::kPerDocument}) {
    const DocumentMask documents = document_mask(positions, segments, how);
    const torch::Tensor packed = model.logits(row_of(a, b), &documents);
    EXPECT_LT(max_difference(packed.narrow(1, 0, 5), model.logits(a)), 1e-5);
    EXPECT_LT(max_difference(packed.narrow(1, 5, 7), model.logits(b)), 1e-5);
    // Another first document: the second's logits do not move.
    const torch::Tensor other = model.logits(row_of(tokens_for(m, 1, 5, 9), b), &documents);
    EXPECT_LT(max_difference(other.narrow(1, 5, 7), packed.narrow(1, 5, 7)), 1e-6);
    EXPECT_GT(max_difference(other.narrow(1, 0, 5), packed.narrow(1, 0, 5)), 1e-4);
  }
  // Without the layout the second document would see the first.
  EXPECT_GT(max_difference(model.logits(row_of(a, b)).narrow(1, 5, 7), model.logits(b)), 1e-4);
  // The mask: causal inside each document, nothing across, padding to padding;
  // the slices: the same documents.
  const torch::Tensor allowed =
      document_mask(positions, segments, DocumentAttention::kMask).allowed[0][0];
  EXPECT_TRUE(allowed[6][5].item<bool>());
  EXPECT_FALSE(allowed[6][4].item<bool>());
  EXPECT_FALSE(allowed[5][6].item<bool>());
  EXPECT_TRUE(allowed[13][12].item<bool>());
  EXPECT_FALSE(allowed[12][11].item<bool>());
  const auto spans = document_mask(positions, segments).spans;
  ASSERT_EQ(spans.size(), 1u);
  ASSERT_EQ(spans[0].size(), 3u);
  EXPECT_EQ(std::make_tuple(spans[0][1].first, spans[0][1].end, spans[0][1].padding),
            std::make_tuple(std::int64_t{5}, std::int64_t{12}, false));
  EXPECT_EQ(std::make_tuple(spans[0][2].first, spans[0][2].end, spans[0][2].padding),
            std::make_tuple(std::int64_t{12}, std::int64_t{16}, true));
  // The variable-length kernel's input; off the GPU (or in fp32) the same
  // documents run per slice, with the same logits.
  const DocumentMask varlen = document_mask(positions, segments, DocumentAttention::kVarlen);
  const torch::Tensor cumulative = varlen.cumulative_lengths.to(torch::kInt64);
  EXPECT_EQ(std::vector<std::int64_t>(cumulative.data_ptr<std::int64_t>(),
                                      cumulative.data_ptr<std::int64_t>() + cumulative.numel()),
            (std::vector<std::int64_t>{0, 5, 12, 16}));
  EXPECT_EQ(varlen.longest_span, 7);
  EXPECT_LT(max_difference(model.logits(row_of(a, b), &varlen).narrow(1, 5, 7), model.logits(b)),
            1e-5);
}

// HF's sliding window: query i reads key j when 0 <= i - j < window; the
// queries are the last slots (the decoder's step reads the whole cache).
TEST(SlidingWindow, MaskKeepsTheQueryAndWindowMinusOneKeysBefore) {
  const torch::Tensor mask = sliding_window_mask(3, 5, 2, torch::kCPU);
  const torch::Tensor want =
      torch::tensor({0, 1, 1, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 1, 1}, torch::kBool).view({3, 5});
  EXPECT_TRUE(mask.equal(want)) << mask;
  EXPECT_TRUE(sliding_window_mask(4, 4, 1, torch::kCPU).equal(torch::eye(4, torch::kBool)));
  EXPECT_TRUE(
      sliding_window_mask(4, 4, 4, torch::kCPU).equal(torch::ones({4, 4}, torch::kBool).tril()));
}

config::ModelConfig windowed(const std::string& family, std::int64_t window) {
  auto m = preset("tiny");
  m.family = family;
  m.sliding_window = window;
  m.layer_types.assign(static_cast<std::size_t>(m.num_hidden_layers), "sliding_attention");
  return m;
}

// With L layers of window W, logit p depends on tokens p - L (W - 1) .. p:
// a change of token 0 reaches exactly the positions up to L (W - 1).
TEST(SlidingWindow, LayersAttendWithinTheirWindow) {
  const auto m = windowed("mistral", 3);
  const auto model = build(m, {}, 2);
  torch::Tensor tokens = tokens_for(m, 1, 12);
  const torch::Tensor before = model.logits(tokens);
  tokens[0][0] = (tokens[0][0].item<std::int64_t>() + 1) % m.vocab_size;
  const torch::Tensor after = model.logits(tokens);
  const std::int64_t reach = m.num_hidden_layers * (m.sliding_window - 1);  // 4
  EXPECT_GT(max_difference(before.narrow(1, reach, 1), after.narrow(1, reach, 1)), 1e-5);
  EXPECT_TRUE(before.narrow(1, reach + 1, 12 - reach - 1)
                  .equal(after.narrow(1, reach + 1, 12 - reach - 1)));
  // A window as long as the rows is full causal attention.
  auto full = m;
  full.sliding_window = 12;
  auto plain = m;
  plain.layer_types.clear();
  EXPECT_LT(max_difference(build(full, {}, 2).logits(tokens), build(plain, {}, 2).logits(tokens)),
            1e-6);
}

// Packed rows under a window: every document attention path gives each
// document the logits it has alone.
TEST(SlidingWindow, PackedDocumentsKeepTheirWindow) {
  const auto m = windowed("qwen3", 3);
  const auto model = build(m, lora_on(), 5);
  const torch::Tensor a = tokens_for(m, 1, 5, 1), b = tokens_for(m, 1, 7, 2);
  const torch::Tensor row = torch::cat({a, b, torch::zeros({1, 4}, torch::kInt64)}, 1);
  const torch::Tensor positions =
      torch::cat({torch::arange(5), torch::arange(7), torch::arange(4)}).unsqueeze(0);
  const torch::Tensor segments = torch::cat({torch::zeros(5), torch::ones(7), torch::full({4}, -1)})
                                     .to(torch::kInt64)
                                     .unsqueeze(0);
  for (const auto how :
       {DocumentAttention::kMask, DocumentAttention::kPerDocument, DocumentAttention::kVarlen}) {
    const DocumentMask documents = document_mask(positions, segments, how);
    const torch::Tensor packed = model.logits(row, &documents);
    EXPECT_LT(max_difference(packed.narrow(1, 0, 5), model.logits(a)), 1e-5);
    EXPECT_LT(max_difference(packed.narrow(1, 5, 7), model.logits(b)), 1e-5);
  }
}

// One rotary table per distinct base: SmolLM3's NoPE layers have none,
// Gemma 3's local layers share one of their own.
TEST(LayerPlans, OneRotaryTablePerBaseAndNoneForNoRopeLayers) {
  auto m = preset("tiny");
  m.family = "smollm3";
  m.num_hidden_layers = 4;
  m.layer_types = {"full_attention", "full_attention", "full_attention", "full_attention_no_rope"};
  const LayerPlans smollm3(m, 16, torch::kCPU);
  EXPECT_EQ(smollm3[0].rope, smollm3[2].rope);
  EXPECT_NE(smollm3[0].rope, nullptr);
  EXPECT_EQ(smollm3[3].rope, nullptr);
  EXPECT_EQ(smollm3[0].window, 0);

  m.family = "gemma3";
  m.sliding_window = 5;
  m.rope_theta = 1e6;
  m.rope_local_theta = 1e4;
  m.layer_types = {"sliding_attention", "sliding_attention", "full_attention", "sliding_attention"};
  const LayerPlans gemma3(m, 16, torch::kCPU);
  EXPECT_EQ(gemma3[0].rope, gemma3[3].rope);
  EXPECT_NE(gemma3[0].rope, gemma3[2].rope);
  EXPECT_EQ(gemma3[0].window, 5);
  EXPECT_EQ(gemma3[2].window, 0);
  auto local = m;
  local.rope_theta = 1e4;
  EXPECT_TRUE(gemma3[0].rope->cos().equal(RotaryEmbedding(local, 16, torch::kCPU).cos()));
  EXPECT_TRUE(gemma3[2].rope->cos().equal(RotaryEmbedding(m, 16, torch::kCPU).cos()));
}

// The size table the preflight prices activations from (block_activations.h)
// is the forward's: q, k, v, the attention's output, the MLP's width, the
// block's output, the causal and the packed rows' masks and the spans the
// per-document path attends.
TEST(BlockActivations, SizeTableIsTheForwardsTensors) {
  const auto m = preset("tiny");  // grouped-query: 4 heads, 2 key/value heads
  const auto model = build(m, {}, 3);
  const std::int64_t batch = 2, seq = 16;
  const RotaryEmbedding rope(m, seq, torch::kCPU);
  BlockBatch shape;
  shape.batch = batch;
  shape.seq = seq;
  shape.hidden = m.hidden_size;
  shape.intermediate = m.intermediate_size;
  shape.heads = m.num_attention_heads;
  shape.kv_heads = m.num_key_value_heads;
  shape.head_dim = m.head_dim;
  const BlockActivationSizes sizes = block_activation_sizes(shape);

  std::int64_t q_elements = 0, k_elements = 0, v_elements = 0, attended = 0, scores = 0;
  const LayerPlans plans(m, seq, torch::kCPU);
  const BlockAttention causal = block_attention(m, nullptr, plans[0]);
  const BlockAttention recording = [&](const torch::Tensor& q, const torch::Tensor& k,
                                       const torch::Tensor& v) {
    q_elements = q.numel();
    k_elements = k.numel();
    v_elements = v.numel();
    // One score per query head, query and key (masked_attention's q k^T).
    scores = q.size(0) * q.size(1) * q.size(2) * k.size(2);
    const torch::Tensor out = causal(q, k, v);
    attended = out.numel();
    return out;
  };
  const torch::Tensor hidden = torch::randn({batch, seq, m.hidden_size});
  const torch::Tensor out = decoder_block_forward(hidden, model.unit_tensors(1), m, {}, plans[0],
                                                  nullptr, torch::Tensor(), recording);
  EXPECT_EQ(sizes.tokens, batch * seq);
  EXPECT_EQ(q_elements, sizes.queries);
  EXPECT_EQ(k_elements, sizes.keys);
  EXPECT_EQ(v_elements, sizes.keys);
  EXPECT_EQ(attended, sizes.queries);
  EXPECT_EQ(scores, sizes.scores);
  EXPECT_EQ(out.numel(), sizes.hidden);
  EXPECT_EQ(model.parameter("model.layers.0.mlp.gate_proj.weight").size(0) * batch * seq,
            sizes.intermediate);
  EXPECT_EQ(sizes.mask, seq * seq);  // one causal [S, S] for the batch
  EXPECT_EQ(sizes.gathered_rope, 0);

  // Packed rows: two documents and padding in each row.
  const torch::Tensor segments =
      torch::cat({torch::zeros(5), torch::ones(7), torch::full({4}, -1)}).to(torch::kInt64);
  const torch::Tensor positions = torch::cat({torch::arange(5), torch::arange(7), torch::arange(4)})
                                      .unsqueeze(0)
                                      .repeat({batch, 1});
  const torch::Tensor row_segments = segments.unsqueeze(0).repeat({batch, 1});
  shape.packed = true;
  EXPECT_EQ(document_mask(positions, row_segments, DocumentAttention::kMask).allowed.numel(),
            block_activation_sizes(shape).mask);
  // The cos and sin rows gathered per position: a one-head input has their shape.
  EXPECT_EQ(block_activation_sizes(shape).gathered_rope,
            2 * rope.apply(torch::zeros({batch, 1, seq, m.head_dim}), positions).numel());
  shape.rows_apart = true;
  const DocumentMask per_document = document_mask(positions, row_segments);
  for (const auto& span : per_document.spans[0]) shape.row_spans.push_back(span.end - span.first);
  const BlockActivationSizes apart = block_activation_sizes(shape);
  EXPECT_EQ(apart.scores, batch * m.num_attention_heads * (5 * 5 + 7 * 7 + 4 * 4));
  EXPECT_EQ(apart.call_scores, m.num_attention_heads * 7 * 7);  // the longest document
  EXPECT_EQ(apart.call_mask, 7 * 7);
}

// On a GPU in bf16 with NSS_VARLEN_ATTENTION=1 (scripts/bench/gpu_backlog.sh):
// the variable-length flash kernel gives each packed document the logits it
// has alone, within bf16 rounding, and the block-diagonal mask's; the
// second document never sees the first.
TEST(LlamaModel, CudaVarlenAttentionKeepsDocumentsApart) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  const char* requested = std::getenv("NSS_VARLEN_ATTENTION");
  if (requested == nullptr || std::string(requested) != "1")
    GTEST_SKIP() << "set NSS_VARLEN_ATTENTION=1 to run the variable-length kernel";
  ASSERT_TRUE(plan::environment_switches().varlen_attention)
      << "NSS_VARLEN_ATTENTION=1, but this build has no "
         "variable-length kernel (libtorch 2.11 only)";
  const auto m = preset("tiny");
  const torch::TensorOptions on_gpu = torch::TensorOptions(torch::kBFloat16).device(torch::kCUDA);
  LlamaModel model(m, lora_on(), on_gpu);
  model.load(InitialWeights(m, lora_on(), 5));
  const auto gpu = [](const torch::Tensor& t) { return t.to(torch::kCUDA); };
  const torch::Tensor a = gpu(tokens_for(m, 1, 5, 1)), b = gpu(tokens_for(m, 1, 7, 2));
  const auto row_of = [&](const torch::Tensor& first, const torch::Tensor& second) {
    return torch::cat({first, second, gpu(torch::zeros({1, 4}, torch::kInt64))}, 1);
  };
  const torch::Tensor positions =
      gpu(torch::cat({torch::arange(5), torch::arange(7), torch::arange(4)}).unsqueeze(0));
  const torch::Tensor segments =
      gpu(torch::cat({torch::zeros(5), torch::ones(7), torch::full({4}, -1)})
              .to(torch::kInt64)
              .unsqueeze(0));
  const DocumentMask varlen = document_mask(positions, segments, DocumentAttention::kVarlen);
  const DocumentMask masked = document_mask(positions, segments, DocumentAttention::kMask);
  const torch::Tensor packed = model.logits(row_of(a, b), &varlen).to(torch::kFloat32);
  const double scale = packed.abs().max().item<double>();
  const auto alone = [&](const torch::Tensor& t) { return model.logits(t).to(torch::kFloat32); };
  // bf16 keeps 8 bits: a few units of its last place of the largest logit.
  EXPECT_LT(max_difference(packed.narrow(1, 0, 5), alone(a)), 3e-2 * scale);
  EXPECT_LT(max_difference(packed.narrow(1, 5, 7), alone(b)), 3e-2 * scale);
  EXPECT_LT(
      max_difference(packed.narrow(1, 0, 12),
                     model.logits(row_of(a, b), &masked).to(torch::kFloat32).narrow(1, 0, 12)),
      3e-2 * scale);
  const torch::Tensor other =
      model.logits(row_of(gpu(tokens_for(m, 1, 5, 9)), b), &varlen).to(torch::kFloat32);
  EXPECT_EQ(max_difference(other.narrow(1, 5, 7), packed.narrow(1, 5, 7)), 0.0)
      << "the second document's scores never include the first's tokens";
  EXPECT_GT(max_difference(other.narrow(1, 0, 5), packed.narrow(1, 0, 5)), 1e-3 * scale);
}

// w_t = mask_t / T: the weighted loss is the mean cross-entropy over the
// targets, and a masked token's label has no effect on loss or gradients.
TEST(LlamaModel, MaskedLabelsDoNotReachTheLossOrTheGradients) {
  const auto m = preset("tiny");
  const auto model = build(m, {}, 3);
  const auto tokens = tokens_for(m, 2, 9);
  const auto inputs = tokens.narrow(1, 0, 8);
  const torch::Tensor targets = tokens.narrow(1, 1, 8).clone();
  torch::Tensor mask = torch::ones({2, 8});
  mask[0].narrow(0, 0, 5).zero_();  // a prompt
  mask[1][7] = 0;
  const torch::Tensor weights = mask / mask.sum();
  const auto gradients_of = [&](const torch::Tensor& labels) {
    for (int u = 0; u < model.num_units(); ++u)
      for (auto& t : model.unit_tensors(u)) t.mutable_grad() = torch::Tensor();
    const torch::Tensor loss = model.weighted_loss(inputs, labels, weights);
    loss.backward();
    std::vector<torch::Tensor> grads{loss.detach()};
    for (int u = 0; u < model.num_units(); ++u)
      for (auto& t : model.unit_tensors(u))
        if (t.grad().defined()) grads.push_back(t.grad().clone());
    return grads;
  };
  const auto reference = gradients_of(targets);
  const torch::Tensor per_token = torch::nn::functional::cross_entropy(
      model.logits(inputs).reshape({-1, m.vocab_size}), targets.reshape({-1}),
      torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kNone));
  const torch::Tensor keep = mask.reshape({-1}).to(torch::kBool);
  EXPECT_NEAR(reference[0].item<double>(), per_token.masked_select(keep).mean().item<double>(),
              1e-6);
  torch::Tensor relabelled = targets.clone();
  relabelled[0].narrow(0, 0, 5).random_(m.vocab_size);
  relabelled[1][7] = (targets[1][7].item<std::int64_t>() + 1) % m.vocab_size;
  const auto changed = gradients_of(relabelled);
  ASSERT_GT(reference.size(), 1u);
  ASSERT_EQ(reference.size(), changed.size());
  for (std::size_t i = 0; i < reference.size(); ++i)
    EXPECT_TRUE(torch::equal(reference[i], changed[i])) << "tensor " << i;
}

TEST(LlamaModel, HeadLossIsScaledSumOfCrossEntropy) {
  const auto m = preset("tiny");
  const auto model = build(m, {}, 3);
  const auto tokens = tokens_for(m, 2, 9);
  const auto inputs = tokens.narrow(1, 0, 8), targets = tokens.narrow(1, 1, 8);
  const torch::Tensor mean = torch::nn::functional::cross_entropy(
      model.logits(inputs).reshape({-1, m.vocab_size}), targets.reshape({-1}));
  EXPECT_NEAR(model.loss(inputs, targets).item<double>(), mean.item<double>(), 1e-6);
  // A fresh model scores near log(vocab): the loss is in nats, per token.
  EXPECT_NEAR(mean.item<double>(), std::log(static_cast<double>(m.vocab_size)), 0.1);
}

TEST(Lora, ZeroBLeavesLogitsUnchanged) {
  const auto m = preset("tiny");
  const auto base = build(m, {}, 9);
  const auto adapted = build(m, lora_on(0.3), 9);
  const auto tokens = tokens_for(m, 2, 10);
  EXPECT_TRUE(base.logits(tokens).equal(adapted.logits(tokens)));
  DropoutKey key{9, 1, {0, 1}, 0};
  EXPECT_TRUE(base.loss(tokens, tokens, nullptr).equal(adapted.loss(tokens, tokens, &key)));
}

// A LoRA model whose B matrices are non-zero, so adapters and dropout matter.
LlamaModel adapted_model(const config::ModelConfig& m, double dropout) {
  LlamaModel model = build(m, lora_on(dropout), 4);
  torch::NoGradGuard no_grad;
  torch::manual_seed(4);
  for (int unit = 0; unit < model.num_units(); ++unit)
    for (std::size_t i = 0; i < model.unit_specs(unit).size(); ++i)
      if (model.unit_specs(unit)[i].role == ParamRole::kLoraB)
        model.unit_tensors(unit)[i].normal_(0.0, 0.5);
  return model;
}

TEST(Lora, DropoutReplaysAndDoesNotDependOnHowSamplesAreSplit) {
  const auto m = preset("tiny");
  const auto model = adapted_model(m, 0.25);
  const auto tokens = tokens_for(m, 2, 9, 8);
  const auto inputs = tokens.narrow(1, 0, 8), targets = tokens.narrow(1, 1, 8);
  const DropoutKey key{77, 5, {10, 11}, 0};
  const double loss = model.loss(inputs, targets, &key).item<double>();
  EXPECT_EQ(loss, model.loss(inputs, targets, &key).item<double>());  // replay
  const DropoutKey next_step{77, 6, {10, 11}, 0};
  EXPECT_NE(loss, model.loss(inputs, targets, &next_step).item<double>());
  EXPECT_NE(loss, model.loss(inputs, targets, nullptr).item<double>());

  // One sample per micro-batch (as on 2 ranks), and the rows swapped.
  const DropoutKey first{77, 5, {10}, 0}, second{77, 5, {11}, 0};
  const double split =
      0.5 * (model.loss(inputs.narrow(0, 0, 1), targets.narrow(0, 0, 1), &first).item<double>() +
             model.loss(inputs.narrow(0, 1, 1), targets.narrow(0, 1, 1), &second).item<double>());
  EXPECT_NEAR(split, loss, 1e-6);
  const DropoutKey swapped{77, 5, {11, 10}, 0};
  EXPECT_NEAR(model.loss(inputs.flip(0), targets.flip(0), &swapped).item<double>(), loss, 1e-6);

  // The gradient (activation-checkpointing recompute) replays the same mask.
  auto grads = [&] {
    const torch::Tensor a = model.parameter("model.layers.0.self_attn.q_proj.lora_A.weight");
    a.mutable_grad() = torch::Tensor();
    model.loss(inputs, targets, &key).backward();
    return a.grad().clone();
  };
  EXPECT_TRUE(grads().equal(grads()));
}

TEST(Lora, DropoutRate) {
  DropoutKey key{1, 2, {3, 4}, 5};
  const torch::Tensor x = torch::ones({2, 50, 40});
  const torch::Tensor mult = lora_dropout_multiplier(x, key, 2, 0.1);
  const double kept = (mult > 0).to(torch::kFloat64).mean().item<double>();
  EXPECT_NEAR(kept, 0.9, 0.02);
  EXPECT_NEAR(mult.max().item<double>(), 1.0 / 0.9, 1e-6);
  EXPECT_FALSE(mult.equal(lora_dropout_multiplier(x, key, 3, 0.1)));  // per projection
  key.layer = 6;
  EXPECT_FALSE(mult.equal(lora_dropout_multiplier(x, key, 2, 0.1)));  // per layer
}

// The flat buffer of a unit filled rank by rank (ragged shards crossing
// parameter boundaries, as FSDP does) equals the whole model's unit.
TEST(Init, UnitShardsEqualTheWholeModel) {
  const auto m = preset("tiny");
  const auto lora = lora_on();
  const auto model = build(m, lora, 21);
  const InitialWeights weights(m, lora, 21);
  for (int unit = 0; unit < model.num_units(); ++unit) {
    const auto& specs = model.unit_specs(unit);
    std::vector<torch::Tensor> flat_parts;
    for (const auto& t : model.unit_tensors(unit)) flat_parts.push_back(t.detach().reshape({-1}));
    const torch::Tensor whole = torch::cat(flat_parts);
    const std::int64_t total = whole.numel();
    for (int world = 1; world <= 3; ++world) {
      const std::int64_t shard = (total + world - 1) / world;
      std::vector<float> buffer(static_cast<std::size_t>(shard * world), 0.0f);
      for (int rank = 0; rank < world; ++rank) {
        // Rank r fills [r * shard, (r + 1) * shard) parameter by parameter.
        std::int64_t start = 0;
        for (const auto& spec : specs) {
          const std::int64_t lo = std::max(start, rank * shard);
          const std::int64_t hi = std::min(start + spec.numel(), (rank + 1) * shard);
          if (lo < hi) weights.fill(spec, lo - start, hi - lo, buffer.data() + lo);
          start += spec.numel();
        }
      }
      const torch::Tensor gathered =
          torch::from_blob(buffer.data(), {total}, torch::kFloat32).clone();
      EXPECT_TRUE(gathered.equal(whole)) << "unit " << unit << " at world size " << world;
    }
  }
}

TEST(LlamaModel, Bfloat16ComputeStaysCloseToFloat32) {
  const auto m = preset("tiny");
  const auto fp32 = build(m, {}, 6);
  LlamaModel bf16(m, {}, torch::kBFloat16);
  bf16.load(InitialWeights(m, {}, 6));
  const auto tokens = tokens_for(m, 2, 16);
  const torch::Tensor a = fp32.logits(tokens);
  const torch::Tensor b = bf16.logits(tokens).to(torch::kFloat32);
  EXPECT_EQ(bf16.logits(tokens).scalar_type(), torch::kBFloat16);
  EXPECT_LT(max_difference(a, b), 0.05 * a.abs().max().item<double>());
}

}  // namespace
}  // namespace nss::model
