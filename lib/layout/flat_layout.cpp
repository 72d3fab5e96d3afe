#include "layout/flat_layout.h"

#include <algorithm>

#include "core/error.h"

namespace nss::layout {
namespace {

std::int64_t round_up(std::int64_t n, std::int64_t multiple) {
  return (n + multiple - 1) / multiple * multiple;
}

}  // namespace

std::int64_t FlatParam::numel() const {
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

FlatLayout::FlatLayout(std::vector<FlatParam> params, int world_size)
    : params_(std::move(params)), world_size_(world_size) {
  if (world_size < 1) throw InternalError("fsdp", "world size must be positive");
  for (const auto& p : params_) {
    if (p.quantized) {
      if (p.trainable) throw InternalError("fsdp", p.name + " is trainable and quantised");
      const std::int64_t start = round_up(quantized_numel_, kQuantizedGroup);
      slots_.push_back({false, start, true});
      quantized_numel_ = start + p.numel();
      quantized_parameters_ += p.numel();
      continue;
    }
    std::int64_t& cursor = p.trainable ? trainable_numel_ : frozen_numel_;
    slots_.push_back({p.trainable, cursor});
    cursor += p.numel();
  }
}

std::int64_t FlatLayout::shard_size(bool trainable) const {
  const std::int64_t n = numel(trainable);
  return (n + world_size_ - 1) / world_size_;
}

std::int64_t FlatLayout::quantized_shard_size() const {
  return round_up(quantized_numel_, kQuantizedGroup * world_size_) / world_size_;
}

std::vector<ShardPiece> FlatLayout::shard_pieces(bool trainable, int rank) const {
  return pieces(trainable, false, shard_size(trainable), rank);
}

std::vector<ShardPiece> FlatLayout::quantized_pieces(int rank) const {
  return pieces(false, true, quantized_shard_size(), rank);
}

std::vector<ShardPiece> FlatLayout::pieces(bool trainable, bool quantized, std::int64_t size,
                                           int rank) const {
  const std::int64_t begin = size * rank, end = begin + size;
  std::vector<ShardPiece> pieces;
  for (std::size_t i = 0; i < params_.size(); ++i) {
    if (slots_[i].trainable != trainable || slots_[i].quantized != quantized) continue;
    const std::int64_t p_begin = slots_[i].offset, p_end = p_begin + params_[i].numel();
    const std::int64_t lo = std::max(begin, p_begin), hi = std::min(end, p_end);
    if (lo >= hi) continue;
    pieces.push_back({i, lo - p_begin, hi - lo, lo - begin});
  }
  return pieces;
}

ElementRanges FlatLayout::decay_ranges(int rank) const {
  ElementRanges ranges;
  for (const auto& piece : shard_pieces(true, rank)) {
    if (!params_[piece.param].decay) continue;
    const std::int64_t begin = piece.shard_offset, end = begin + piece.length;
    if (!ranges.empty() && ranges.back().second == begin)
      ranges.back().second = end;  // merge neighbours: fewer, larger kernel calls
    else
      ranges.emplace_back(begin, end);
  }
  return ranges;
}

}  // namespace nss::layout
