#include "generate/sample_stream.h"

#include <algorithm>
#include <string>

#include <torch/torch.h>

#include "core/error.h"

namespace nss::generate {
namespace {

// Beyond these a typo, not a plan: a run would not end in any queue's time.
constexpr std::int64_t kMaxSamples = 1000000;
constexpr std::int64_t kMaxBatch = 65536;

// The longest prompt and its new tokens: each decoder row's capacity.
std::int64_t longest_sequence(const GenerationRequest& r) {
  std::size_t longest = 0;
  for (const auto& prompt : r.prompts) longest = std::max(longest, prompt.size());
  return static_cast<std::int64_t>(longest) + r.max_new_tokens;
}

GenerationRequest checked(GenerationRequest r, const model::LlamaModel& model) {
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
  if (r.prompts.empty()) throw UsageError("generate", "no prompts to decode");
  const std::int64_t positions = model.config().max_position_embeddings;
  if (longest_sequence(r) > positions)
    throw UsageError("generate",
                     "the longest prompt (" +
                         std::to_string(longest_sequence(r) - r.max_new_tokens) + " tokens) plus " +
                         std::to_string(r.max_new_tokens) + " new tokens exceed the model's " +
                         std::to_string(positions) + " positions",
                     "shorten the prompt or ask for fewer new tokens");
  return r;
}

}  // namespace

SampleStream::SampleStream(const model::LlamaModel& model, const TextCodec& codec,
                           GenerationRequest request, Jobs jobs, std::int64_t total)
    : codec_(codec),
      request_(checked(std::move(request), model)),
      sampler_(request_.sampling),
      jobs_(std::move(jobs)),
      total_(total),
      decoder_(
          model,
          total < 0 ? request_.batch_size : std::clamp<std::int64_t>(total, 1, request_.batch_size),
          longest_sequence(request_)),
      rows_(static_cast<std::size_t>(decoder_.rows())) {}

GeneratedSample SampleStream::next() {
  NSS_ASSERT(total_ < 0 || emitted_ < total_, "generate", "next() past the last job");
  while (ended_.count(emitted_) == 0) advance();
  const auto it = ended_.find(emitted_++);
  GeneratedSample sample = std::move(it->second);
  ended_.erase(it);
  return sample;
}

void SampleStream::admit() {
  std::vector<std::int64_t> rows;
  std::vector<std::vector<std::int64_t>> prompts;
  for (std::size_t r = 0; r < rows_.size(); ++r) {
    if (rows_[r].job >= 0 || (total_ >= 0 && admitted_ == total_)) continue;
    const SampleJob job = jobs_(admitted_);
    Sequence& s = rows_[r];
    s = Sequence{admitted_++, GeneratedSample{job.prompt_index, job.sample, {}, {}, {}}, false,
                 request_.constraint ? request_.constraint->start() : 0};
    rows.push_back(static_cast<std::int64_t>(r));
    prompts.push_back(request_.prompts.at(static_cast<std::size_t>(job.prompt)));
  }
  if (rows.empty()) return;
  const torch::Tensor first = decoder_.start(rows, prompts).to(torch::kCPU);
  if (!logits_.defined()) logits_ = torch::zeros({decoder_.rows(), first.size(1)}, torch::kFloat32);
  logits_.index_copy_(0, torch::tensor(rows, torch::kInt64), first);
}

void SampleStream::advance() {
  admit();
  std::vector<std::int64_t> tokens(rows_.size(), 0);
  std::vector<bool> running(rows_.size(), false);
  bool any = false;
  for (std::size_t r = 0; r < rows_.size(); ++r) {
    Sequence& s = rows_[r];
    if (s.job < 0) continue;
    if (draw(s, logits_[static_cast<std::int64_t>(r)].data_ptr<float>())) judge(s);
    if (!s.finished && static_cast<std::int64_t>(s.out.tokens.size()) == request_.max_new_tokens) {
      s.out.finish_reason = "length";
      s.finished = true;
    }
    if (s.finished) {
      finish(s);
      continue;
    }
    tokens[r] = s.out.tokens.back();
    running[r] = true;
    any = true;
  }
  if (any) logits_ = decoder_.step(tokens, running).to(torch::kCPU).contiguous();
}

// Draws the next token of `s` (masked first by the constraint, which then
// moves on with it); false when the constraint allowed none, and the
// sequence ends there.
bool SampleStream::draw(Sequence& s, float* row) {
  const std::int64_t vocab = logits_.size(1);
  TokenConstraint* constraint = request_.constraint;
  if (constraint) constraint->mask(s.constraint_state, row, vocab);
  const auto position = static_cast<std::int64_t>(s.out.tokens.size());
  const std::int64_t id = sampler_.pick(row, vocab, {s.out.prompt_index, s.out.sample, position});
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
void SampleStream::judge(Sequence& s) const {
  const auto& ends = codec_.end_ids();
  if (std::find(ends.begin(), ends.end(), s.out.tokens.back()) != ends.end()) {
    s.out.tokens.pop_back();
    s.out.finish_reason = "eos";
    s.finished = true;
    return;
  }
  const auto& stop = request_.stop;
  if (stop.empty()) return;
  std::size_t longest = 0;
  for (const auto& marker : stop) longest = std::max(longest, marker.size());
  const std::size_t window = std::min(s.out.tokens.size(), longest + 8);
  const std::string tail =
      codec_.decode({s.out.tokens.end() - static_cast<std::ptrdiff_t>(window), s.out.tokens.end()});
  if (std::none_of(stop.begin(), stop.end(), [&](const std::string& marker) {
        return tail.find(marker) != std::string::npos;
      }))
    return;
  const std::string text = codec_.decode(s.out.tokens);
  std::size_t cut = std::string::npos;
  for (const auto& marker : stop) cut = std::min(cut, text.find(marker));
  if (cut == std::string::npos) return;  // the tail's match was an artefact of cutting it
  s.out.text = text.substr(0, cut);
  s.out.finish_reason = "stop";
  s.finished = true;
}

void SampleStream::finish(Sequence& s) {
  if (s.out.finish_reason != "stop") s.out.text = codec_.decode(s.out.tokens);
  ended_.emplace(s.job, std::move(s.out));
  s = Sequence{};
}

}  // namespace nss::generate
