#include "generate/generation.h"

#include "generate/sample_stream.h"

namespace nss::generate {

void generate(const model::LlamaModel& model, const TextCodec& codec,
              const GenerationRequest& request,
              const std::function<void(const GeneratedSample&)>& emit) {
  if (request.prompts.empty()) return;
  const std::int64_t samples = request.num_samples;
  const std::int64_t total = static_cast<std::int64_t>(request.prompts.size()) * samples;
  SampleStream stream(
      model, codec, request,
      [&](std::int64_t job) {
        return SampleJob{job / samples, request.first_prompt_index + job / samples,
                         request.first_sample_index + job % samples};
      },
      total);
  for (std::int64_t job = 0; job < total; ++job) emit(stream.next());
}

}  // namespace nss::generate
