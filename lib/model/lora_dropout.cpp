#include "model/lora_dropout.h"

#include <ATen/Parallel.h>
#include <torch/torch.h>

#include "core/error.h"
#include "model/counter_rng.h"

namespace nss::model {

torch::Tensor lora_dropout_multiplier(const torch::Tensor& x, const DropoutKey& key, int projection,
                                      double p, std::int64_t first_feature,
                                      std::int64_t all_features) {
  NSS_ASSERT(x.dim() == 3, "model", "LoRA dropout expects [batch, seq, features]");
  const std::int64_t features = all_features > 0 ? all_features : x.size(2);
  NSS_ASSERT(first_feature >= 0 && first_feature + x.size(2) <= features, "model",
             "LoRA dropout of features outside the input");
  const std::int64_t rows = x.size(0);
  const std::int64_t per_row = x.size(1) * features;
  NSS_ASSERT(static_cast<std::int64_t>(key.sample_ids.size()) == rows, "model",
             "dropout key has " + std::to_string(key.sample_ids.size()) + " sample ids for " +
                 std::to_string(rows) + " rows");
  const PhiloxKey stream =
      stream_key(key.seed, "lora_dropout/step" + std::to_string(key.step) + "/layer" +
                               std::to_string(key.layer) + "/proj" + std::to_string(projection));
  // The mask is generated on the host, so it is the same on every device type.
  torch::Tensor keep = torch::empty({rows, x.size(1), features}, torch::kUInt8);
  std::uint8_t* data = keep.data_ptr<std::uint8_t>();
  at::parallel_for(0, rows, 1, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t row = begin; row < end; ++row)
      fill_keep_mask(stream, static_cast<std::uint64_t>(key.sample_ids[row]), per_row, p,
                     data + row * per_row);
  });
  if (features != x.size(2)) keep = keep.narrow(2, first_feature, x.size(2));
  return keep.to(x.device(), x.scalar_type()) * (1.0 / (1.0 - p));
}

}  // namespace nss::model
