#include "data/window_source.h"

#include "data/dataset_checks.h"

namespace nss::data {

WindowSource::WindowSource(std::shared_ptr<const TokenDataset> dataset, std::int64_t seq_len,
                           bool shuffle, std::uint64_t seed)
    : dataset_(std::move(dataset)),
      seq_len_(seq_len),
      order_(num_windows(dataset_->num_tokens(), seq_len), shuffle, seed) {}

void WindowSource::read(std::vector<std::int64_t> ids, TokenBatch& batch) const {
  read_windows(*dataset_, seq_len_, std::move(ids), batch);
}

}  // namespace nss::data
