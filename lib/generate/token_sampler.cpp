#include "generate/token_sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "core/error.h"
#include "model/counter_rng.h"

namespace nss::generate {
namespace {

std::int32_t argmax(const float* logits, std::int64_t vocab) {
  std::int64_t best = 0;
  for (std::int64_t i = 1; i < vocab; ++i)
    if (logits[i] > logits[best] || std::isnan(logits[best])) best = i;
  return static_cast<std::int32_t>(best);
}

}  // namespace

TokenSampler::TokenSampler(const SamplingSettings& settings) : settings_(settings) {
  if (!(settings.temperature >= 0) || !std::isfinite(settings.temperature))
    throw UsageError(
        "generate",
        "temperature must be a finite number >= 0, got " + std::to_string(settings.temperature),
        "use 0 for greedy decoding, or e.g. 0.9");
  if (settings.top_k < 0)
    throw UsageError("generate", "top_k must be >= 0, got " + std::to_string(settings.top_k),
                     "use 0 for no limit");
  if (!(settings.top_p > 0 && settings.top_p <= 1))
    throw UsageError("generate", "top_p must be in (0, 1], got " + std::to_string(settings.top_p),
                     "use 1 for no limit");
}

double TokenSampler::uniform(const DrawPosition& at) const {
  const auto prompt = static_cast<std::uint64_t>(at.prompt_index);
  const std::array<std::uint32_t, 4> counter = {
      static_cast<std::uint32_t>(at.position), static_cast<std::uint32_t>(at.sample),
      static_cast<std::uint32_t>(prompt), static_cast<std::uint32_t>(prompt >> 32)};
  static const char* kStream = "generate.sample";
  return model::unit_uniform(
      model::philox4x32(counter, model::stream_key(settings_.seed, kStream))[0]);
}

std::vector<Candidate> TokenSampler::candidates(const float* logits, std::int64_t vocab) const {
  NSS_ASSERT(vocab > 0 && settings_.temperature > 0, "generate",
             "candidates need a vocabulary and a positive temperature");
  // Descending scaled logit, the highest id first among equals (the reverse
  // of transformers' ascending sort, so top-p drops the same one of tied
  // tokens): a fixed order, so one uniform number always names one token.
  std::vector<std::int32_t> order(static_cast<std::size_t>(vocab));
  std::iota(order.begin(), order.end(), 0);
  std::vector<double> scaled(static_cast<std::size_t>(vocab));
  for (std::int64_t i = 0; i < vocab; ++i) {
    const double value = logits[i] / settings_.temperature;
    scaled[i] = std::isnan(value) ? -std::numeric_limits<double>::infinity() : value;
  }
  std::sort(order.begin(), order.end(), [&](std::int32_t a, std::int32_t b) {
    return scaled[a] > scaled[b] || (scaled[a] == scaled[b] && a > b);
  });

  // top-k keeps every token whose logit reaches the k-th largest (ties kept).
  std::size_t kept = order.size();
  if (settings_.top_k > 0 && settings_.top_k < vocab) {
    const double threshold = scaled[order[static_cast<std::size_t>(settings_.top_k) - 1]];
    while (kept > 1 && scaled[order[kept - 1]] < threshold) --kept;
  }
  const double top = scaled[order[0]];
  if (!std::isfinite(top)) return {{order[0], 1.0}};
  std::vector<double> weights(kept);
  double total = 0;
  for (std::size_t i = 0; i < kept; ++i) total += weights[i] = std::exp(scaled[order[i]] - top);
  // Tokens without probability (refused by a constraint: -inf) are no
  // candidates: rounding at the top of the range must not pick one.
  while (kept > 1 && weights[kept - 1] == 0) --kept;
  weights.resize(kept);

  // top-p drops the least likely tokens whose cumulative probability, summed
  // from the least likely up, stays within 1 - top_p (at least one is kept).
  if (settings_.top_p < 1) {
    double from_bottom = 0;
    std::size_t keep = kept;
    for (std::size_t i = kept; i-- > 1;) {
      from_bottom += weights[i] / total;
      if (from_bottom > 1 - settings_.top_p) break;
      keep = i;
    }
    for (std::size_t i = keep; i < kept; ++i) total -= weights[i];
    kept = keep;
  }
  std::vector<Candidate> result(kept);
  for (std::size_t i = 0; i < kept; ++i) result[i] = {order[i], weights[i] / total};
  return result;
}

std::int32_t TokenSampler::pick(const float* logits, std::int64_t vocab,
                                const DrawPosition& at) const {
  NSS_ASSERT(vocab > 0, "generate", "a vocabulary of no tokens");
  if (settings_.temperature == 0) return argmax(logits, vocab);
  const std::vector<Candidate> choices = candidates(logits, vocab);
  const double target = uniform(at);
  double cumulative = 0;
  for (const Candidate& c : choices) {
    cumulative += c.probability;
    if (target < cumulative) return c.token;
  }
  return choices.back().token;  // rounding at the very top of the range
}

}  // namespace nss::generate
