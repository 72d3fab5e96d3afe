#include "pipeline/record_length_check.h"

#include <algorithm>

#include <fmt/format.h>

#include "data/example_statistics.h"
#include "data/token_dataset.h"

namespace nss::pipeline {

void check_record_length(const StageContext& context) {
  const std::int64_t limit = context.config.pipeline.max_new_tokens;
  const auto dataset = data::TokenDataset::open(context.paths.tokens());
  const std::vector<std::int64_t> lengths = data::completion_lengths(*dataset);
  const auto longer = std::count_if(lengths.begin(), lengths.end(),
                                    [limit](std::int64_t length) { return length > limit; });
  if (longer == 0) return;
  const std::int64_t longest = *std::max_element(lengths.begin(), lengths.end());
  throw UsageError(
      "pipeline",
      fmt::format("pipeline.max_new_tokens {} cannot hold {} of the {} training examples of {} "
                  "(the longest takes {} tokens with its end token): records like them could "
                  "never be sampled whole, and cut-off records would stop the sampling early",
                  limit, longer, lengths.size(), dataset->path(), longest),
      fmt::format("set pipeline.max_new_tokens={} or more, or remove the longest rows from the "
                  "table",
                  longest));
}

}  // namespace nss::pipeline
