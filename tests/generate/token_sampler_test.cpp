// Token choice: greedy ties and NaNs, the transformers order and tie rules of
// temperature, top-k and top-p, frequencies that follow the softmax, and
// draws that depend only on (seed, prompt, sample, position).
#include "generate/token_sampler.h"

#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <vector>

#include <gtest/gtest.h>

#include "core/error.h"

namespace nss::generate {
namespace {

SamplingSettings settings(double temperature, std::int64_t top_k = 0, double top_p = 1.0,
                          std::uint64_t seed = 7) {
  return {temperature, top_k, top_p, seed};
}

// Logits whose softmax is `probabilities`.
std::vector<float> logits_of(const std::vector<double>& probabilities) {
  std::vector<float> logits;
  for (double p : probabilities) logits.push_back(static_cast<float>(std::log(p)));
  return logits;
}

std::map<std::int32_t, int> draw_many(const TokenSampler& sampler, const std::vector<float>& logits,
                                      int draws) {
  std::map<std::int32_t, int> counts;
  for (int i = 0; i < draws; ++i)
    ++counts[sampler.pick(logits.data(), static_cast<std::int64_t>(logits.size()), {3, 1, i})];
  return counts;
}

TEST(TokenSampler, GreedyTakesTheLargestLogitAndTheLowestIdAmongEquals) {
  const TokenSampler greedy(settings(0));
  const std::vector<float> logits = {0.5f, 2.0f, -1.0f, 2.0f};
  EXPECT_EQ(greedy.pick(logits.data(), 4, {}), 1);
  const std::vector<float> with_nan = {std::nanf(""), 0.1f, 0.3f};
  EXPECT_EQ(greedy.pick(with_nan.data(), 3, {}), 2);
}

TEST(TokenSampler, FrequenciesFollowTheSoftmax) {
  const std::vector<double> p = {0.5, 0.3, 0.15, 0.05};
  const auto counts = draw_many(TokenSampler(settings(1.0)), logits_of(p), 40000);
  for (std::size_t i = 0; i < p.size(); ++i) {
    const double share = counts.count(static_cast<std::int32_t>(i))
                             ? counts.at(static_cast<std::int32_t>(i)) / 40000.0
                             : 0.0;
    // 5 standard errors of a binomial share.
    EXPECT_NEAR(share, p[i], 5 * std::sqrt(p[i] * (1 - p[i]) / 40000)) << "token " << i;
  }
}

TEST(TokenSampler, TemperatureSharpensAndFlattens) {
  const auto logits = logits_of({0.6, 0.4});
  const auto cold = draw_many(TokenSampler(settings(0.25)), logits, 20000);
  // p^(1/T) renormalised: 0.6^4 / (0.6^4 + 0.4^4) = 0.835.
  EXPECT_NEAR(cold.at(0) / 20000.0, 0.835, 0.02);
  const auto hot = draw_many(TokenSampler(settings(4.0)), logits, 20000);
  EXPECT_NEAR(hot.at(0) / 20000.0, 0.525, 0.02);  // 0.6^0.25 / (0.6^0.25 + 0.4^0.25)
}

TEST(TokenSampler, TopKKeepsTheKLargestWithTies) {
  const auto logits = logits_of({0.4, 0.2, 0.2, 0.1, 0.1});
  const auto counts = draw_many(TokenSampler(settings(1.0, 2)), logits, 20000);
  // The 2nd largest value is tied: both ties stay (transformers' `scores < kth value`).
  EXPECT_EQ((std::set<std::int32_t>{0, 1, 2}), [&] {
    std::set<std::int32_t> seen;
    for (const auto& [token, n] : counts) seen.insert(token);
    return seen;
  }());
  EXPECT_NEAR(counts.at(0) / 20000.0, 0.5, 0.02);
  const auto one = draw_many(TokenSampler(settings(1.0, 1)), logits, 1000);
  EXPECT_EQ(one.size(), 1u);
  EXPECT_EQ(one.begin()->first, 0);
}

TEST(TokenSampler, TopPKeepsTheNucleusAsTransformersDoes) {
  // Ascending 0.05, 0.15, 0.3, 0.5: cumulative 0.05, 0.2, 0.5, 1.0; with
  // top_p 0.8 the tokens whose cumulative stays <= 0.2 go.
  const auto logits = logits_of({0.5, 0.3, 0.15, 0.05});
  const auto counts = draw_many(TokenSampler(settings(1.0, 0, 0.8)), logits, 20000);
  EXPECT_EQ(counts.size(), 2u);
  EXPECT_NEAR(counts.at(0) / 20000.0, 0.5 / 0.8, 0.02);
  // A tiny nucleus still keeps the most likely token.
  const auto tiny = draw_many(TokenSampler(settings(1.0, 0, 1e-6)), logits, 1000);
  EXPECT_EQ(tiny.size(), 1u);
  EXPECT_EQ(tiny.begin()->first, 0);
}

TEST(TokenSampler, ADrawDependsOnlyOnSeedPromptSampleAndPosition) {
  const auto logits = logits_of({0.25, 0.25, 0.25, 0.25});
  const TokenSampler a(settings(1.0, 0, 1.0, 11)), b(settings(1.0, 0, 1.0, 11));
  std::vector<std::int32_t> forward, backward(64);
  for (int i = 0; i < 64; ++i) forward.push_back(a.pick(logits.data(), 4, {5, 2, i}));
  for (int i = 63; i >= 0; --i) backward[i] = b.pick(logits.data(), 4, {5, 2, i});
  EXPECT_EQ(forward, backward);
  EXPECT_NE(a.uniform({5, 2, 0}), a.uniform({5, 3, 0}));
  EXPECT_NE(a.uniform({5, 2, 0}), a.uniform({6, 2, 0}));
  EXPECT_NE(a.uniform({5, 2, 0}), TokenSampler(settings(1.0, 0, 1.0, 12)).uniform({5, 2, 0}));
}

TEST(TokenSampler, TokensRefusedWithMinusInfinityAreNeverCandidatesNorPicked) {
  const float refused = -std::numeric_limits<float>::infinity();
  const std::vector<float> logits = {refused, 2.0f, refused, 1.0f, refused, refused};
  for (const double top_p : {1.0, 0.999999}) {
    const TokenSampler sampler(settings(1.0, 0, top_p));
    const auto choices = sampler.candidates(logits.data(), 6);
    for (const auto& c : choices) EXPECT_TRUE(c.token == 1 || c.token == 3) << c.token;
    for (std::int64_t position = 0; position < 20000; ++position) {
      const std::int32_t id = sampler.pick(logits.data(), 6, {0, 0, position});
      ASSERT_TRUE(id == 1 || id == 3) << id;
    }
  }
}

TEST(TokenSampler, RefusesSettingsOutsideTheirRange) {
  EXPECT_THROW(TokenSampler(settings(-0.1)), UsageError);
  EXPECT_THROW(TokenSampler(settings(NAN)), UsageError);
  EXPECT_THROW(TokenSampler(settings(1.0, -1)), UsageError);
  EXPECT_THROW(TokenSampler(settings(1.0, 0, 0.0)), UsageError);
  EXPECT_THROW(TokenSampler(settings(1.0, 0, 1.5)), UsageError);
}

}  // namespace
}  // namespace nss::generate
