#include "data/example_statistics.h"

#include <algorithm>
#include <string>

#include "core/error.h"

namespace nss::data {

ExampleStatistics example_statistics(const TokenDataset& dataset, std::int64_t seq_len) {
  NSS_ASSERT(seq_len > 0, "data", "seq_len " + std::to_string(seq_len));
  if (!dataset.has_document_offsets())
    throw DataError("data",
                    "training one example per row needs the documents of " + dataset.path() +
                        ", but it has no /document_offsets",
                    "prepare it again (nss_prepare_data and scripts/prepare_data_hf.py write "
                    "/document_offsets)");
  ExampleStatistics stats;
  stats.examples = dataset.num_documents();
  std::int64_t padding = 0;
  for (std::int64_t d = 0; d < stats.examples; ++d) {
    const std::int64_t length = dataset.document_offset(d + 1) - dataset.document_offset(d);
    stats.longest_example = std::max(stats.longest_example, length);
    if (length > seq_len + 1) {
      ++stats.truncated_examples;
      stats.truncated_tokens += length - (seq_len + 1);
    }
    // The row's inputs are its first seq_len tokens; the rest of them is padding.
    padding += seq_len - std::min(length, seq_len);
  }
  if (stats.examples > 0)
    stats.padding_share = static_cast<double>(padding) /
                          (static_cast<double>(stats.examples) * static_cast<double>(seq_len));
  return stats;
}

std::vector<std::int64_t> completion_lengths(const TokenDataset& dataset) {
  if (!dataset.has_document_offsets() || !dataset.has_loss_mask())
    throw DataError("data",
                    dataset.path() + " has no " +
                        (dataset.has_document_offsets() ? "/loss_mask" : "/document_offsets") +
                        ": its examples' completions are unknown",
                    "prepare it with nss_prepare_data --format records or sft (or "
                    "scripts/prepare_data_hf.py), which write both");
  std::vector<std::int64_t> lengths;
  lengths.reserve(static_cast<std::size_t>(dataset.num_documents()));
  std::vector<std::uint8_t> mask;
  for (std::int64_t d = 0; d < dataset.num_documents(); ++d) {
    const std::int64_t first = dataset.document_offset(d);
    mask.resize(static_cast<std::size_t>(dataset.document_offset(d + 1) - first));
    dataset.read_loss_mask(first, static_cast<std::int64_t>(mask.size()), mask.data());
    lengths.push_back(std::count(mask.begin(), mask.end(), std::uint8_t{1}));
  }
  return lengths;
}

}  // namespace nss::data
