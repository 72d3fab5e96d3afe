#include "data/sample_source.h"

#include "data/packed_source.h"
#include "data/sample_permutation.h"
#include "data/window_source.h"

namespace nss::data {

std::int64_t ShuffledOrder::sample_at(std::int64_t epoch, std::int64_t position) const {
  if (!shuffle_) return position;
  const SamplePermutation order(static_cast<std::uint64_t>(size_), seed_,
                                static_cast<std::uint64_t>(epoch));
  return static_cast<std::int64_t>(order(static_cast<std::uint64_t>(position)));
}

std::shared_ptr<const SampleSource> make_sample_source(std::shared_ptr<const TokenDataset> dataset,
                                                       const SampleSourceOptions& options) {
  if (options.packing == config::Packing::kWindows)
    return std::make_shared<WindowSource>(std::move(dataset), options.seq_len, options.shuffle,
                                          options.seed);
  return std::make_shared<PackedSource>(std::move(dataset), options);
}

}  // namespace nss::data
