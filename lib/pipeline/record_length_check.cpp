#include "pipeline/record_length_check.h"

#include <algorithm>

#include <fmt/format.h>

#include "data/example_statistics.h"
#include "data/token_dataset.h"

namespace nss::pipeline {

void check_record_length(const StageContext& context) {
  const std::int64_t limit = context.config.pipeline.max_new_tokens;
  const std::int64_t positions = context.config.model.max_position_embeddings;
  const auto dataset = data::TokenDataset::open(context.paths.tokens());
  const std::vector<std::int64_t> lengths = data::completion_lengths(*dataset);
  if (lengths.empty()) return;
  // The prompt is what precedes the targets: the same tokens sampling starts from.
  std::int64_t prompt = 0;
  for (std::size_t d = 0; d < lengths.size(); ++d) {
    const auto i = static_cast<std::int64_t>(d);
    prompt = std::max(prompt,
                      dataset->document_offset(i + 1) - dataset->document_offset(i) - lengths[d]);
  }
  const std::int64_t longest = *std::max_element(lengths.begin(), lengths.end());
  const auto longer = std::count_if(lengths.begin(), lengths.end(),
                                    [limit](std::int64_t length) { return length > limit; });
  if (prompt + longest > positions)
    throw UsageError(
        "pipeline",
        fmt::format("the longest training example of {} takes {} tokens after its {}-token "
                    "prompt, more than the model's {} positions: its records cannot be sampled",
                    dataset->path(), longest, prompt, positions),
        "fine-tune a model with more positions (model.max_position_embeddings), or remove the "
        "longest rows from the table");
  if (longer > 0)
    throw UsageError(
        "pipeline",
        fmt::format("pipeline.max_new_tokens {} cannot hold {} of the {} training examples of {} "
                    "(the longest takes {} tokens with its end token): records like them could "
                    "never be sampled whole, and cut-off records would stop the sampling early",
                    limit, longer, lengths.size(), dataset->path(), longest),
        fmt::format("set pipeline.max_new_tokens={} or more, or remove the longest rows from the "
                    "table",
                    longest));
  if (prompt + limit > positions)
    throw UsageError("pipeline",
                     fmt::format("pipeline.max_new_tokens {} after the {}-token prompt exceeds the "
                                 "model's {} positions",
                                 limit, prompt, positions),
                     fmt::format("set pipeline.max_new_tokens between {} (the longest training "
                                 "example's records) and {}",
                                 longest, positions - prompt));
}

}  // namespace nss::pipeline
