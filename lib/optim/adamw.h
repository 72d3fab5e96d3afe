// AdamW on flat fp32 shards with the exact update of torch.optim.AdamW
// (bias correction, decoupled weight decay), where weight decay applies only
// to element ranges of the shard (a shard can span a norm weight, which is
// not decayed, and a projection, which is).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace at {
class Tensor;
}

namespace nss::optim {

struct AdamWOptions {
  double beta1 = 0.9;
  double beta2 = 0.95;
  double eps = 1e-8;
  double weight_decay = 0.1;
};

/// One trainable shard and its optimizer state. `param` is the fp32 master
/// (its .grad() holds the gradient); the moments have the same shape.
struct AdamWShard {
  at::Tensor* param;
  at::Tensor* exp_avg;
  at::Tensor* exp_avg_sq;
  std::vector<std::pair<std::int64_t, std::int64_t>> decay_ranges;  // [begin, end) elements
};

class AdamW {
 public:
  explicit AdamW(AdamWOptions options) : options_(options) {}

  /// Applies optimizer step number `step` (1-based, for bias correction) with
  /// learning rate `lr` to every shard whose gradient is defined.
  void step(const std::vector<AdamWShard>& shards, double lr, std::int64_t step) const;

  const AdamWOptions& options() const { return options_; }

 private:
  AdamWOptions options_;
};

}  // namespace nss::optim
