// What TokenDataset knows of its ids: the sampled range the dataset checks
// compare with the model's vocabulary before a job starts, and the check of
// every id read() hands out, which catches what the attributes and the scan
// could not see (a wrong max_token_id, a negative id between the sampled
// blocks) as a DataError, not as an index error deep inside the model.
#include <algorithm>
#include <string>
#include <vector>

#include "core/error.h"
#include "data/token_dataset.h"

namespace nss::data {
namespace {

constexpr std::int64_t kNoLimit = std::numeric_limits<std::int64_t>::max();

// No attribute bounds a signed type's ids below: only a scan finds negatives.
bool signed_ids(DType dtype) {
  return dtype == DType::kInt32 || dtype == DType::kInt64;
}

}  // namespace

void TokenDataset::limit_token_ids(std::int64_t vocab_size) const {
  std::int64_t limit = id_limit_.load();
  while (vocab_size < limit && !id_limit_.compare_exchange_weak(limit, vocab_size)) {
  }
}

void TokenDataset::check_ids(std::int64_t first, std::int64_t count,
                             const std::int64_t* ids) const {
  if (count <= 0) return;
  const std::int64_t limit = id_limit_.load(std::memory_order_relaxed);
  // One min/max pass over what was just copied; only a failure looks closer.
  const auto [low, high] = std::minmax_element(ids, ids + count);
  if (*low >= 0 && *high < limit) return;
  const std::int64_t* bad =
      std::find_if(ids, ids + count, [&](std::int64_t id) { return id < 0 || id >= limit; });
  const std::int64_t id = *bad;
  std::string text = "token dataset " + path_ + " holds id " + std::to_string(id) + " at token " +
                     std::to_string(first + (bad - ids)) + " of /" + kTokensDataset;
  if (limit == kNoLimit)
    text += "; token ids index the vocabulary and cannot be negative";
  else
    text += ", outside the model's vocabulary [0, " + std::to_string(limit) + ") (vocab_size " +
            std::to_string(limit) + ")";
  if (metadata_.max_token_id && id > *metadata_.max_token_id)
    text += "; its max_token_id attribute says " + std::to_string(*metadata_.max_token_id) +
            ", which is wrong";
  throw DataError("data", text,
                  "the file's attributes did not reveal this id: prepare the data again with the "
                  "model's tokenizer (nss_prepare_data, scripts/prepare_data_hf.py), or give the "
                  "model a vocab_size above every id");
}

TokenIdRange TokenDataset::token_id_range(std::int64_t max_scanned) const {
  TokenIdRange range;
  if (metadata_.max_token_id) {
    range.max = *metadata_.max_token_id;
    range.max_from_attribute = true;
    if (!signed_ids(dtype_)) return range;
  }
  // A full scan when the file is small; otherwise evenly spaced blocks.
  constexpr std::int64_t kBlocks = 256;
  const std::int64_t scanned = std::min(num_tokens_, std::max<std::int64_t>(max_scanned, 1));
  const std::int64_t blocks = scanned == num_tokens_ ? 1 : kBlocks;
  const std::int64_t block = std::max<std::int64_t>(scanned / blocks, 1);
  std::vector<std::int64_t> buffer(static_cast<std::size_t>(block));
  range.min = kNoLimit;
  for (std::int64_t b = 0; b < blocks; ++b) {
    const std::int64_t first = blocks == 1 ? 0 : (num_tokens_ - block) * b / (blocks - 1);
    copy_tokens(first, block, buffer.data());
    for (std::int64_t i = 0; i < block; ++i) {
      const std::int64_t id = buffer[static_cast<std::size_t>(i)];
      if (id < range.min) {
        range.min = id;
        range.min_at = first + i;
      }
      if (id > range.max) {  // beyond the attribute, when there is one: it is wrong
        range.max = id;
        range.max_at = first + i;
        range.max_from_attribute = false;
      }
    }
    range.scanned_tokens += block;
  }
  return range;
}

}  // namespace nss::data
