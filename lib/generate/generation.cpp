#include "generate/generation.h"

#include <algorithm>

#include <torch/torch.h>

#include "core/error.h"
#include "generate/decoder.h"

namespace nss::generate {
namespace {

// One (prompt, sample) being decoded.
struct Sequence {
  GeneratedSample out;
  bool finished = false;
  std::int64_t constraint_state = 0;
};

// Draws the next token of `s` from `logits` (masked first by the
// constraint, which then moves on with it); false when the constraint
// allowed none, and the sequence ends there.
bool draw(Sequence& s, float* logits, std::int64_t vocab, std::int64_t position,
          const TokenSampler& sampler, TokenConstraint* constraint) {
  if (constraint) constraint->mask(s.constraint_state, logits, vocab);
  const std::int64_t id = sampler.pick(logits, vocab, {s.out.prompt_index, s.out.sample, position});
  if (constraint) {
    s.constraint_state = constraint->advance(s.constraint_state, id);
    if (s.constraint_state == TokenConstraint::kRefused) {
      s.out.finish_reason = "length";
      s.finished = true;
      return false;
    }
  }
  s.out.tokens.push_back(id);
  return true;
}

// Ends `s` when its last token is an end id or its text reaches a stop string.
// Only the tail that can hold a new match is decoded each step (a stop text
// of L bytes spans at most L tokens; the margin covers special tokens, which
// decode to nothing, and a first piece's dropped space), so a long sample
// costs O(length), not O(length^2); the whole text only once it matched.
void judge(Sequence& s, const TextCodec& codec, const std::vector<std::string>& stop) {
  const auto& ends = codec.end_ids();
  if (std::find(ends.begin(), ends.end(), s.out.tokens.back()) != ends.end()) {
    s.out.tokens.pop_back();
    s.out.finish_reason = "eos";
    s.finished = true;
    return;
  }
  if (stop.empty()) return;
  std::size_t longest = 0;
  for (const auto& marker : stop) longest = std::max(longest, marker.size());
  const std::size_t window = std::min(s.out.tokens.size(), longest + 8);
  const std::string tail =
      codec.decode({s.out.tokens.end() - static_cast<std::ptrdiff_t>(window), s.out.tokens.end()});
  if (std::none_of(stop.begin(), stop.end(), [&](const std::string& marker) {
        return tail.find(marker) != std::string::npos;
      }))
    return;
  const std::string text = codec.decode(s.out.tokens);
  std::size_t cut = std::string::npos;
  for (const auto& marker : stop) cut = std::min(cut, text.find(marker));
  if (cut == std::string::npos) return;  // the tail's match was an artefact of cutting it
  s.out.text = text.substr(0, cut);
  s.out.finish_reason = "stop";
  s.finished = true;
}

// Beyond these a typo, not a plan: a run would not end in any queue's time.
constexpr std::int64_t kMaxSamples = 1000000;
constexpr std::int64_t kMaxBatch = 65536;

void check(const GenerationRequest& r) {
  if (r.max_new_tokens < 1)
    throw UsageError("generate",
                     "--max-new-tokens must be >= 1, got " + std::to_string(r.max_new_tokens));
  if (r.num_samples < 1 || r.num_samples > kMaxSamples)
    throw UsageError("generate", "--num-samples must be in [1, " + std::to_string(kMaxSamples) +
                                     "], got " + std::to_string(r.num_samples));
  if (r.batch_size < 1 || r.batch_size > kMaxBatch)
    throw UsageError("generate", "--batch-size must be in [1, " + std::to_string(kMaxBatch) +
                                     "], got " + std::to_string(r.batch_size));
  for (const auto& marker : r.stop)
    if (marker.empty()) throw UsageError("generate", "--stop needs a non-empty text");
}

}  // namespace

void generate(const model::LlamaModel& model, const TextCodec& codec,
              const GenerationRequest& request,
              const std::function<void(const GeneratedSample&)>& emit) {
  check(request);
  const TokenSampler sampler(request.sampling);
  torch::NoGradGuard no_grad;

  const std::int64_t total =
      static_cast<std::int64_t>(request.prompts.size()) * request.num_samples;
  Decoder decoder(model);
  for (std::int64_t first = 0; first < total; first += request.batch_size) {
    const std::int64_t count = std::min(request.batch_size, total - first);
    std::vector<Sequence> batch(static_cast<std::size_t>(count));
    std::vector<std::vector<std::int64_t>> prompts;
    for (std::int64_t i = 0; i < count; ++i) {
      const std::int64_t job = first + i;
      batch[i].out.prompt_index = request.first_prompt_index + job / request.num_samples;
      batch[i].out.sample = request.first_sample_index + job % request.num_samples;
      if (request.constraint) batch[i].constraint_state = request.constraint->start();
      prompts.push_back(request.prompts[static_cast<std::size_t>(job / request.num_samples)]);
    }
    torch::Tensor logits = decoder.prefill(prompts, request.max_new_tokens);
    for (std::int64_t position = 0; position < request.max_new_tokens; ++position) {
      const torch::Tensor host = logits.to(torch::kCPU).contiguous();
      const std::int64_t vocab = host.size(1);
      std::vector<std::int64_t> next(static_cast<std::size_t>(count));
      bool all_finished = true;
      for (std::int64_t i = 0; i < count; ++i) {
        Sequence& s = batch[i];
        if (s.finished) {
          next[i] = s.out.tokens.empty() ? 0 : s.out.tokens.back();  // its output is never read
          continue;
        }
        if (draw(s, host[i].data_ptr<float>(), vocab, position, sampler, request.constraint))
          judge(s, codec, request.stop);
        next[i] = s.out.tokens.empty() ? 0 : s.out.tokens.back();
        all_finished = all_finished && s.finished;
      }
      if (all_finished || position + 1 == request.max_new_tokens) break;
      logits = decoder.step(torch::tensor(next, torch::kInt64).to(logits.device()));
    }
    for (Sequence& s : batch) {
      if (!s.finished) s.out.finish_reason = "length";
      if (s.out.finish_reason != "stop") s.out.text = codec.decode(s.out.tokens);
      emit(s.out);
    }
  }
}

}  // namespace nss::generate
