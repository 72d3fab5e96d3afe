// Samples decoded with continuous batching: batch_size rows of the decoder
// (decoder.h) each hold one sample; the moment a sample ends (an end id, a
// stop string, max_new_tokens, or a constraint that allows nothing) its row
// takes the next job, so a long run keeps every row busy however unequal
// the samples' lengths. What a sample generates depends only on its prompt,
// the seed and its (prompt, sample) key (the sampler's counter-based
// draws), never on the rows beside it; samples come out in job order.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <vector>

#include <torch/types.h>

#include "generate/decoder.h"
#include "generate/generation.h"

namespace nss::generate {

/// What job k samples: request.prompts[prompt] under the key (prompt_index,
/// sample).
struct SampleJob {
  std::int64_t prompt = 0;
  std::int64_t prompt_index = 0;
  std::int64_t sample = 0;
};

class SampleStream {
 public:
  using Jobs = std::function<SampleJob(std::int64_t job)>;

  /// Decodes the jobs `jobs` numbers 0, 1, ... (`total` of them; -1: no
  /// end) with the settings of `request` (its prompts, max_new_tokens,
  /// stop, sampling, batch_size and constraint); `model` and `codec` must
  /// outlive the stream. UsageError (exit 2) for settings out of range, an
  /// empty prompt or one longer than the model's context.
  SampleStream(const model::LlamaModel& model, const TextCodec& codec, GenerationRequest request,
               Jobs jobs, std::int64_t total);

  /// The next job's sample, in job order: decodes until it has ended.
  GeneratedSample next();

 private:
  // One (prompt, sample) being decoded.
  struct Sequence {
    std::int64_t job = -1;  // -1: the row is free
    GeneratedSample out;
    bool finished = false;
    std::int64_t constraint_state = 0;
  };

  void admit();    // starts the next jobs in the free rows
  void advance();  // one token for every row that holds a sample
  bool draw(Sequence& s, float* logits);
  void judge(Sequence& s) const;
  void finish(Sequence& s);

  const TextCodec& codec_;
  GenerationRequest request_;
  TokenSampler sampler_;
  Jobs jobs_;
  std::int64_t total_;
  Decoder decoder_;
  std::vector<Sequence> rows_;
  torch::Tensor logits_;  // float32 [rows, vocab] on the CPU: each row's next draw
  std::int64_t admitted_ = 0, emitted_ = 0;
  std::map<std::int64_t, GeneratedSample> ended_;  // by job, until emitted
};

}  // namespace nss::generate
