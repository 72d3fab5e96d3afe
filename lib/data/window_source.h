// Fixed windows: window i = tokens[i*seq_len, i*seq_len + seq_len + 1),
// consecutive windows sharing one token, crossing document boundaries; each
// epoch visits them in the SamplePermutation(num_windows, seed, epoch) order
// (or in file order, unshuffled).
#pragma once

#include "data/sample_source.h"

namespace nss::data {

class WindowSource : public SampleSource {
 public:
  WindowSource(std::shared_ptr<const TokenDataset> dataset, std::int64_t seq_len, bool shuffle,
               std::uint64_t seed);

  std::int64_t samples_in_epoch(std::int64_t epoch) const override {
    return order_.samples_in_epoch(epoch);
  }
  std::int64_t sample_at(std::int64_t epoch, std::int64_t position) const override {
    return order_.sample_at(epoch, position);
  }
  bool same_size_every_epoch() const override { return true; }
  void read(std::vector<std::int64_t> ids, TokenBatch& batch) const override;
  std::int64_t seq_len() const override { return seq_len_; }

 private:
  std::shared_ptr<const TokenDataset> dataset_;
  std::int64_t seq_len_;
  ShuffledOrder order_;
};

}  // namespace nss::data
