// Rows of whole documents (data.packing: documents or none).
//
// A document longer than a row (seq_len + 1 tokens) is truncated to its
// first seq_len + 1 tokens, or split into pieces [k*seq_len, k*seq_len +
// seq_len + 1) that overlap by one token like windows, so each token is a
// label once (data.long_documents). Each epoch visits the pieces in the
// SamplePermutation(pieces, seed, epoch) order (file order unshuffled);
// `none` puts one piece in a row, `documents` packs them next-fit: a row is
// closed when the next piece does not fit. The plan is a function of (file,
// seed, epoch), recomputed where needed, never stored per rank.
//
// In a row, positions restart at 0 in every piece, a token attends only to
// earlier tokens of its own piece (segments), and neither padding nor the
// token that would cross into the next piece is a target. Unshuffled with
// `none` and `truncate`, sample id d is document d (Poisson sampling reads
// documents so), and kPaddingRow reads as a row of padding.
#pragma once

#include <map>
#include <mutex>

#include "data/sample_source.h"

namespace nss::data {

/// What packing makes of a file (the preflight reports it).
struct PackingStats {
  std::int64_t documents = 0;
  std::int64_t pieces = 0;
  std::int64_t rows = 0;                 // in epoch 0
  std::int64_t truncated_documents = 0;  // longer than a row, with truncate
  std::int64_t truncated_tokens = 0;     // tokens those lose
  std::int64_t split_documents = 0;      // longer than a row, with split
  double padding_share = 0;              // of epoch 0's row tokens
};

/// The labels the pieces keep (every token of a piece but its first) and how
/// many of them the file's /loss_mask marks as targets (all, without one).
struct KeptLabels {
  std::int64_t labels = 0;
  std::int64_t targets = 0;
};

class PackedSource : public SampleSource {
 public:
  /// DataError when the file has no /document_offsets.
  PackedSource(std::shared_ptr<const TokenDataset> dataset, const SampleSourceOptions& options);

  std::int64_t samples_in_epoch(std::int64_t epoch) const override;
  std::int64_t sample_at(std::int64_t epoch, std::int64_t position) const override;
  bool same_size_every_epoch() const override;
  bool packs_documents() const override { return true; }
  void read(std::vector<std::int64_t> ids, TokenBatch& batch) const override;
  std::int64_t seq_len() const override { return options_.seq_len; }

  PackingStats stats() const;

  /// Reads the loss mask of every piece: what truncation leaves to learn.
  KeptLabels kept_labels() const;

  /// The documents' input spans of epoch 0's row whose attention costs most
  /// (sum of span^2; padding after them costs nothing): what the memory
  /// model and the preflight's synthetic step take as the costliest row.
  std::vector<std::int64_t> costliest_row_spans() const;

 private:
  struct Piece {
    std::int64_t first = 0;   // token index
    std::int64_t length = 0;  // <= seq_len + 1
  };
  // Where each row of an epoch starts in that epoch's piece order.
  using RowStarts = std::vector<std::int64_t>;

  Piece piece(std::int64_t index) const;
  std::int64_t piece_at(std::int64_t epoch, std::int64_t position) const;
  std::shared_ptr<const RowStarts> rows_of(std::int64_t epoch) const;
  void read_row(std::int64_t id, std::int64_t row, TokenBatch& batch) const;

  std::shared_ptr<const TokenDataset> dataset_;
  SampleSourceOptions options_;
  std::int64_t num_pieces_ = 0;
  std::vector<std::int64_t> first_piece_;  // split: pieces before document d
  std::int64_t pad_token_ = 0;
  mutable std::mutex mutex_;
  mutable std::map<std::int64_t, std::shared_ptr<const RowStarts>> recent_epochs_;
  mutable std::map<std::int64_t, std::int64_t> rows_per_epoch_;  // kept: 16 bytes an epoch
};

}  // namespace nss::data
