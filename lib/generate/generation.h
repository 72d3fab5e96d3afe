// Generating text: prompts (each sampled num_samples times) through the
// KV-cache decoder with continuous batching (sample_stream.h: batch_size
// samples side by side, an ended one replaced at once), a token chosen per
// step by TokenSampler, and
// each sequence ended by an end id (finish_reason "eos"), a stop string
// ("stop": the text is cut before it) or max_new_tokens ("length"). A
// TokenConstraint, when given, refuses tokens before each draw; a sequence
// left with no allowed token ends as "length".
// Samples come out in prompt order, then sample order, whatever the batch.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "generate/text_codec.h"
#include "generate/token_constraint.h"
#include "generate/token_sampler.h"
#include "model/llama_model.h"

namespace nss::generate {

struct GenerationRequest {
  std::vector<std::vector<std::int64_t>> prompts;  // token ids (TextCodec::encode_prompt)
  std::int64_t max_new_tokens = 256;
  std::int64_t num_samples = 1;
  std::vector<std::string> stop;  // texts that end a sequence
  std::int64_t batch_size = 8;    // samples decoded side by side
  SamplingSettings sampling;
  /// The first prompt's index in the caller's numbering (a rank's share).
  std::int64_t first_prompt_index = 0;
  /// The first sample's index (--records numbers its samples across rounds
  /// and ranks); the sampler's random stream is keyed by it.
  std::int64_t first_sample_index = 0;
  /// Limits each sequence's next token before it is sampled; none: the
  /// model's choice alone.
  TokenConstraint* constraint = nullptr;
};

struct GeneratedSample {
  std::int64_t prompt_index = 0;
  std::int64_t sample = 0;
  std::string text;
  std::vector<std::int64_t> tokens;  // the generated ids (without the end id)
  std::string finish_reason;         // "eos", "stop" or "length"
};

/// Generates every (prompt, sample) of `request`; calls `emit` for each,
/// in order. UsageError for settings out of range, an empty prompt or one
/// longer than the model's context.
void generate(const model::LlamaModel& model, const TextCodec& codec,
              const GenerationRequest& request,
              const std::function<void(const GeneratedSample&)>& emit);

}  // namespace nss::generate
