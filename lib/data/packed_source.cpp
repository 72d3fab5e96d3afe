#include "data/packed_source.h"

#include <algorithm>

#include "core/error.h"
#include "data/sample_permutation.h"

namespace nss::data {
namespace {

constexpr int kRowBits = 40;  // a packed sample id is epoch << 40 | row
constexpr std::size_t kEpochsKept = 3;

std::int64_t pieces_of(std::int64_t length, std::int64_t seq_len) {
  return length <= seq_len + 1 ? 1 : (length - 1 + seq_len - 1) / seq_len;
}

}  // namespace

PackedSource::PackedSource(std::shared_ptr<const TokenDataset> dataset,
                           const SampleSourceOptions& options)
    : dataset_(std::move(dataset)), options_(options) {
  if (!dataset_->has_document_offsets())
    throw DataError("data",
                    "data.packing " + std::string(config::choice_name(options.packing)) +
                        " needs the documents of " + dataset_->path() +
                        ", but it has no /document_offsets",
                    "prepare it again (nss_prepare_data and scripts/prepare_data_hf.py write "
                    "/document_offsets), or use data.packing: windows");
  const std::int64_t documents = dataset_->num_documents();
  if (options_.long_documents == config::LongDocuments::kSplit) {
    first_piece_.resize(static_cast<std::size_t>(documents) + 1, 0);
    for (std::int64_t d = 0; d < documents; ++d) {
      const std::int64_t length = dataset_->document_offset(d + 1) - dataset_->document_offset(d);
      first_piece_[d + 1] = first_piece_[d] + pieces_of(length, options_.seq_len);
    }
    num_pieces_ = first_piece_.back();
  } else {
    num_pieces_ = documents;
  }
  pad_token_ = dataset_->metadata().eos_token_id.value_or(0);
}

PackedSource::Piece PackedSource::piece(std::int64_t index) const {
  const std::int64_t row = options_.seq_len + 1;
  std::int64_t document = index, k = 0;
  if (!first_piece_.empty()) {
    document = std::upper_bound(first_piece_.begin(), first_piece_.end(), index) -
               first_piece_.begin() - 1;
    k = index - first_piece_[document];
  }
  const std::int64_t start = dataset_->document_offset(document);
  const std::int64_t length = dataset_->document_offset(document + 1) - start;
  const std::int64_t first = k * options_.seq_len;
  return {start + first, std::min(row, length - first)};
}

std::int64_t PackedSource::piece_at(std::int64_t epoch, std::int64_t position) const {
  if (!options_.shuffle) return position;
  const SamplePermutation order(static_cast<std::uint64_t>(num_pieces_), options_.seed,
                                static_cast<std::uint64_t>(epoch));
  return static_cast<std::int64_t>(order(static_cast<std::uint64_t>(position)));
}

std::shared_ptr<const PackedSource::RowStarts> PackedSource::rows_of(std::int64_t epoch) const {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto found = recent_epochs_.find(epoch);
    if (found != recent_epochs_.end()) return found->second;
  }
  auto starts = std::make_shared<RowStarts>();
  const std::int64_t capacity = options_.seq_len + 1;
  std::int64_t filled = capacity;  // no open row yet
  for (std::int64_t position = 0; position < num_pieces_; ++position) {
    const std::int64_t length = piece(piece_at(epoch, position)).length;
    if (options_.packing == config::Packing::kNone || filled + length > capacity) {
      starts->push_back(position);
      filled = 0;
    }
    filled += length;
  }
  starts->push_back(num_pieces_);
  std::lock_guard<std::mutex> lock(mutex_);
  recent_epochs_[epoch] = starts;
  while (recent_epochs_.size() > kEpochsKept) recent_epochs_.erase(recent_epochs_.begin());
  return starts;
}

std::int64_t PackedSource::samples_in_epoch(std::int64_t epoch) const {
  if (options_.packing == config::Packing::kNone) return num_pieces_;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto found = rows_per_epoch_.find(epoch);
    if (found != rows_per_epoch_.end()) return found->second;
  }
  const auto rows = static_cast<std::int64_t>(rows_of(epoch)->size()) - 1;
  std::lock_guard<std::mutex> lock(mutex_);
  rows_per_epoch_[epoch] = rows;
  return rows;
}

// Next-fit over another order packs another number of rows; unshuffled, or
// one piece a row, every epoch is the same.
bool PackedSource::same_size_every_epoch() const {
  return options_.packing == config::Packing::kNone || !options_.shuffle;
}

std::int64_t PackedSource::sample_at(std::int64_t epoch, std::int64_t position) const {
  return (epoch << kRowBits) | position;
}

void PackedSource::read(std::vector<std::int64_t> ids, TokenBatch& batch) const {
  const std::int64_t seq_len = options_.seq_len;
  batch.rows = static_cast<std::int64_t>(ids.size());
  batch.seq_len = seq_len;
  batch.tokens.assign(static_cast<std::size_t>(batch.rows * (seq_len + 1)), pad_token_);
  batch.target_mask.assign(static_cast<std::size_t>(batch.rows * seq_len), 0);
  batch.positions.assign(static_cast<std::size_t>(batch.rows * seq_len), 0);
  batch.segments.assign(static_cast<std::size_t>(batch.rows * seq_len), -1);
  for (std::int64_t r = 0; r < batch.rows; ++r)
    if (ids[r] != kPaddingRow) read_row(ids[r], r, batch);
  batch.sample_ids = std::move(ids);
}

void PackedSource::read_row(std::int64_t id, std::int64_t row, TokenBatch& batch) const {
  const std::int64_t seq_len = options_.seq_len;
  const std::int64_t epoch = id >> kRowBits;
  const std::int64_t index = id & ((std::int64_t{1} << kRowBits) - 1);
  std::int64_t begin = index, end = index + 1;
  if (options_.packing != config::Packing::kNone) {
    const auto starts = rows_of(epoch);
    begin = (*starts)[index];
    end = (*starts)[index + 1];
  }
  std::int64_t* tokens = batch.tokens.data() + row * (seq_len + 1);
  std::uint8_t* mask = batch.target_mask.data() + row * seq_len;
  std::int64_t* positions = batch.positions.data() + row * seq_len;
  std::int64_t* segments = batch.segments.data() + row * seq_len;
  std::vector<std::uint8_t> piece_mask(static_cast<std::size_t>(seq_len + 1));
  std::int64_t at = 0;
  for (std::int64_t position = begin; position < end; ++position) {
    const Piece p = piece(piece_at(epoch, position));
    dataset_->read(p.first, p.length, tokens + at);
    dataset_->read_loss_mask(p.first, p.length, piece_mask.data());
    for (std::int64_t i = 0; i < p.length; ++i) {
      // Slot at + i holds token i of the piece; its label is token i + 1.
      if (at + i < seq_len) {
        positions[at + i] = i;
        segments[at + i] = position - begin;
      }
      if (i > 0) mask[at + i - 1] = piece_mask[static_cast<std::size_t>(i)];
    }
    at += p.length;
  }
}

std::vector<std::int64_t> PackedSource::costliest_row_spans() const {
  const std::int64_t seq_len = options_.seq_len;
  const std::int64_t rows = samples_in_epoch(0);
  const auto starts = options_.packing == config::Packing::kNone ? nullptr : rows_of(0);
  std::vector<std::int64_t> costliest, spans;
  std::int64_t highest = -1;
  for (std::int64_t row = 0; row < rows; ++row) {
    const std::int64_t begin = starts ? (*starts)[row] : row;
    const std::int64_t end = starts ? (*starts)[row + 1] : row + 1;
    spans.clear();
    std::int64_t used = 0, cost = 0;
    for (std::int64_t position = begin; position < end && used < seq_len; ++position) {
      const std::int64_t span = std::min(piece(piece_at(0, position)).length, seq_len - used);
      spans.push_back(span);
      used += span;
    }
    for (const std::int64_t span : spans) cost += span * span;
    if (cost > highest) {
      highest = cost;
      costliest = spans;
    }
  }
  return costliest;
}

KeptLabels PackedSource::kept_labels() const {
  KeptLabels kept;
  std::vector<std::uint8_t> mask(static_cast<std::size_t>(options_.seq_len));
  for (std::int64_t index = 0; index < num_pieces_; ++index) {
    const Piece p = piece(index);
    const std::int64_t labels = p.length - 1;  // the piece's first token is no label
    if (labels <= 0) continue;
    kept.labels += labels;
    if (!dataset_->has_loss_mask()) {
      kept.targets += labels;
      continue;
    }
    dataset_->read_loss_mask(p.first + 1, labels, mask.data());
    for (std::int64_t i = 0; i < labels; ++i) kept.targets += mask[static_cast<std::size_t>(i)];
  }
  return kept;
}

PackingStats PackedSource::stats() const {
  PackingStats stats;
  stats.documents = dataset_->num_documents();
  stats.pieces = num_pieces_;
  stats.rows = samples_in_epoch(0);
  const std::int64_t row = options_.seq_len + 1;
  std::int64_t content = 0;
  for (std::int64_t d = 0; d < stats.documents; ++d) {
    const std::int64_t length = dataset_->document_offset(d + 1) - dataset_->document_offset(d);
    if (length <= row) {
      content += length;
    } else if (first_piece_.empty()) {
      ++stats.truncated_documents;
      stats.truncated_tokens += length - row;
      content += row;
    } else {
      ++stats.split_documents;
      content += length + pieces_of(length, options_.seq_len) - 1;  // shared tokens twice
    }
  }
  const double slots = static_cast<double>(stats.rows) * static_cast<double>(row);
  stats.padding_share = slots > 0 ? 1.0 - static_cast<double>(content) / slots : 0.0;
  return stats;
}

}  // namespace nss::data
